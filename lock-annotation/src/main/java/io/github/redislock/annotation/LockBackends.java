package io.github.redislock.annotation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedlockTemplate;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.AutowireCapableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Finds the backend of each {@link DistributedLock} method among the {@link LockOperations} beans, as
 * {@code @Cacheable(cacheManager = ...)} finds its cache manager: the bean its {@code locks} attribute names, else the
 * only one or the {@code @Primary} one. Refuses, naming the method and the bean, a name that is no
 * {@code LockOperations} bean, a lock type the backend cannot serve, and a Redlock lease longer than the Redlock
 * restart delay.
 */
final class LockBackends {

    private final ListableBeanFactory beanFactory;

    LockBackends(ListableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * The backend of {@code operation}'s calls.
     *
     * @throws IllegalStateException naming the method and the bean at fault
     */
    LockBackend resolve(DistributedLockOperation operation) {
        String name = operation.locks.isEmpty() ? defaultBackend(operation) : namedBackend(operation);
        Object bean = beanFactory.getBean(name);
        LockBackend.Acquisition acquisition;
        if (RedisLockTemplateCalls.needsTemplate(operation.type, operation.permits)) {
            acquisition = RedisLockTemplateCalls.acquisition(operation.type, operation.permits, bean);
            if (acquisition == null) {
                throw new IllegalStateException(operation.description + ": " + (operation.permits > 0
                        ? "a semaphore (permits = " + operation.permits + ")" : "type = " + operation.type)
                        + " needs a RedisLockTemplate (fair, read/write locks and semaphores are what one Redis does), but "
                        + "the LockOperations bean '" + name + "' is a " + ClassUtils.getUserClass(bean).getSimpleName() + "; name a "
                        + "RedisLockTemplate bean with locks = \"...\" (the LockOperations beans are " + backendNames()
                        + ")" + (operation.permits > 0 ? "" : " or use the default type"));
            }
        } else {
            acquisition = LockBackend.exclusive((LockOperations) bean);
        }
        checkRedlockLease(name, bean, operation);
        LockOperations locks = (LockOperations) bean;
        return new LockBackend(name, acquisition, locks::asyncExecutor);
    }

    /**
     * Redlock grants nothing on a node that restarted for its restart delay, which must cover every lease: a fixed
     * lease longer than that could be granted again by a node that forgot it.
     */
    private static void checkRedlockLease(String name, Object bean, DistributedLockOperation operation) {
        Duration lease = operation.options.leaseTime();
        if (bean instanceof RedlockTemplate redlock && lease != null && lease.compareTo(redlock.restartDelay()) > 0) {
            throw new IllegalStateException(operation.description + ": locks = \"" + name + "\" (Redlock) with a lease of "
                    + lease + ", longer than the Redlock restart delay (redis-lock.redlock.restart-delay, "
                    + redlock.restartDelay() + "): a node that came back empty could grant the lock again while that lease "
                    + "still ran. Raise the restart delay or shorten the lease");
        }
    }

    private String namedBackend(DistributedLockOperation operation) {
        String name = operation.locks;
        if (beanFactory.containsBean(name) && isBackend(name)) {
            return name;
        }
        String found = beanFactory.containsBean(name)
                ? " names a bean of type " + typeOf(name) + ", which is no LockOperations"
                : " names no bean";
        String hint = name.toLowerCase(Locale.ROOT).contains("redlock") ? ". With the Spring Boot starter, setting "
                + "redis-lock.redlock.nodes adds the Redlock bean 'redlockTemplate'" : "";
        throw new IllegalStateException(operation.description + ": locks = \"" + name + "\"" + found
                + "; the LockOperations beans are " + backendNames() + hint);
    }

    private String defaultBackend(DistributedLockOperation operation) {
        List<String> names = backendNames();
        if (names.isEmpty()) {
            throw new IllegalStateException(operation.description + " needs a LockOperations bean (such as a "
                    + "RedisLockTemplate), and there is none: declare one, or with Spring Boot check that there is a "
                    + "RedisConnectionFactory (spring-boot-starter-data-redis and spring.data.redis.*)");
        }
        if (names.size() == 1) {
            return names.get(0);
        }
        if (beanFactory instanceof AutowireCapableBeanFactory autowiring) {
            try {
                return autowiring.resolveNamedBean(LockOperations.class).getBeanName();
            } catch (BeansException ambiguous) {
                // no primary one: refused below
            }
        }
        throw new IllegalStateException(operation.description + ": there are " + names.size() + " LockOperations beans "
                + names + " and none is @Primary; name one with locks = \"...\", or mark one @Primary");
    }

    /** The names of the {@link LockOperations} beans, in this context and its ancestors. */
    private List<String> backendNames() {
        return new ArrayList<>(List.of(
                BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory, LockOperations.class, true, false)));
    }

    private boolean isBackend(String name) {
        return beanFactory.isTypeMatch(name, LockOperations.class);
    }

    private String typeOf(String name) {
        Class<?> type = beanFactory.getType(name);
        return type == null ? "unknown" : ClassUtils.getUserClass(type).getName();
    }
}
