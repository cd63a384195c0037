package io.github.redislock.annotation;

import java.lang.reflect.Method;

import io.github.redislock.core.LockOperations;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.core.Ordered;
import org.springframework.util.StringValueResolver;

/**
 * The Spring AOP advisor for {@link DistributedLock}: a pointcut on annotated methods and an interceptor that locks
 * each call on the method's backend, the {@link LockOperations} bean its {@code locks} attribute names (the only or
 * primary one by default). Works with or without AspectJ. Its order decides where the lock sits among other advisors;
 * keep it before (lower than) the transaction advisor, so the lock is held until the transaction has completed.
 * <p>
 * Spring Boot's auto-configuration declares it. In a plain Spring application declare it yourself, with an auto-proxy
 * creator ({@code @EnableAspectJAutoProxy}) and, for checks of every annotated method at start-up, a
 * {@link DistributedLockValidator}:
 *
 * <pre>{@code
 * @Configuration
 * @EnableAspectJAutoProxy
 * class LockConfig {
 *
 *     @Bean
 *     RedisLockTemplate redisLockTemplate(StringRedisTemplate redis) {
 *         return new RedisLockTemplate(redis);
 *     }
 *
 *     @Bean
 *     static DistributedLockAdvisor distributedLockAdvisor(ConfigurableListableBeanFactory beanFactory) {
 *         return new DistributedLockAdvisor(beanFactory);
 *     }
 *
 *     @Bean
 *     static DistributedLockValidator distributedLockValidator(ConfigurableListableBeanFactory beanFactory,
 *             DistributedLockAdvisor advisor) {
 *         return new DistributedLockValidator(beanFactory, advisor);
 *     }
 * }
 * }</pre>
 *
 * The interceptor takes the locks with {@link LockOperations#acquireAll} (or {@code tryAcquireAll} for {@code SKIP})
 * rather than {@code execute}: several keys are taken all or nothing, and a release may be deferred to the end of a
 * surrounding transaction.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor {

    /** The default order, {@code Ordered.HIGHEST_PRECEDENCE + 1000}: outside {@code @Transactional}'s advisor. */
    public static final int DEFAULT_ORDER = Ordered.HIGHEST_PRECEDENCE + 1000;

    private final transient DistributedLockOperationSource operations;
    private final transient DistributedLockInterceptor interceptor;
    private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {
        @Override
        public boolean matches(Method method, @Nullable Class<?> targetClass) {
            // a JDK proxy asks about the interface method; the annotation may be on the implementation
            Method specific = targetClass != null ? AopUtils.getMostSpecificMethod(method, targetClass) : method;
            return DistributedLockOperationSource.annotation(specific, targetClass) != null;
        }
    };

    /**
     * An advisor over the {@link LockOperations} beans of {@code beanFactory}, with its {@code ${...}} placeholders
     * resolved in durations (when it is a {@link ConfigurableBeanFactory}), no bean references in key expressions,
     * and the {@link #DEFAULT_ORDER}.
     */
    public DistributedLockAdvisor(ListableBeanFactory beanFactory) {
        this(beanFactory, beanFactory instanceof ConfigurableBeanFactory configurable
                ? new EmbeddedValueResolver(configurable) : null, false, DEFAULT_ORDER);
    }

    /**
     * @param beanFactory holds the {@link LockOperations} beans the methods lock on; each method's is looked up once,
     *        when the method is first checked ({@link DistributedLockValidator}) or called, so the advisor can be
     *        created before them
     * @param placeholders resolves {@code ${...}} in durations; may be {@code null}
     * @param allowBeanReferences whether key expressions may reference beans of {@code beanFactory} with {@code @name}
     * @param order the advisor's order among other advisors, e.g. {@link #DEFAULT_ORDER}
     */
    public DistributedLockAdvisor(ListableBeanFactory beanFactory, @Nullable StringValueResolver placeholders,
            boolean allowBeanReferences, int order) {
        LockKeyExpressions expressions = new LockKeyExpressions(allowBeanReferences ? beanFactory : null);
        this.operations = new DistributedLockOperationSource(placeholders, new DistributedLockOperationParser(expressions),
                new LockBackends(beanFactory));
        this.interceptor = new DistributedLockInterceptor(operations, new LockKeyResolver(expressions));
        setOrder(order);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    /**
     * Resolves and checks the annotation on one method of a bean class, as the first call would, with the
     * {@link LockOperations} bean it locks on.
     *
     * @throws IllegalStateException naming the class, method and attribute (or bean) at fault
     */
    public void validate(Method method, Class<?> targetClass) {
        operations.find(method, targetClass);
    }
}
