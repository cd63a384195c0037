package io.github.redislock.annotation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import io.github.redislock.core.AsyncLockExecutor;
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
    /** Holder threads of the Redlock templates that are no {@link LockOperations} yet, by bean name. */
    private final Map<String, Executor> redlockExecutors = new ConcurrentHashMap<>();

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
        } else if (bean instanceof LockOperations locks) {
            acquisition = LockBackend.exclusive(locks);
        } else {
            return redlockWithoutLockOperations(name, (RedlockTemplate) bean, operation);
        }
        checkRedlockLease(name, bean, operation);
        Supplier<Executor> executor = bean instanceof LockOperations locks ? locks::asyncExecutor
                : () -> redlockExecutor(name, (RedlockTemplate) bean);
        return new LockBackend(name, acquisition, executor);
    }

    /**
     * Until {@link RedlockTemplate} implements {@link LockOperations} (issue 22): its exclusive verbs, and holder
     * threads of its own for asynchronous methods. Delete once it does.
     */
    private LockBackend redlockWithoutLockOperations(String name, RedlockTemplate redlock, DistributedLockOperation operation) {
        checkRedlockLease(name, redlock, operation);
        return new LockBackend(name, (keys, options, throwOnTimeout) -> throwOnTimeout
                ? Optional.of(redlock.acquireAll(keys, options)) : redlock.tryAcquireAll(keys, options),
                () -> redlockExecutor(name, redlock));
    }

    private Executor redlockExecutor(String name, RedlockTemplate redlock) {
        return redlockExecutors.computeIfAbsent(name, n -> AsyncLockExecutor.create(redlock.config().asyncHolders()));
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
        List<String> names = new ArrayList<>(List.of(
                BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory, LockOperations.class, true, false)));
        for (String redlock : BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory, RedlockTemplate.class, true,
                false)) {
            if (!names.contains(redlock)) {
                names.add(redlock); // until RedlockTemplate implements LockOperations
            }
        }
        return names;
    }

    private boolean isBackend(String name) {
        return beanFactory.isTypeMatch(name, LockOperations.class) || beanFactory.isTypeMatch(name, RedlockTemplate.class);
    }

    private String typeOf(String name) {
        Class<?> type = beanFactory.getType(name);
        return type == null ? "unknown" : ClassUtils.getUserClass(type).getName();
    }
}
