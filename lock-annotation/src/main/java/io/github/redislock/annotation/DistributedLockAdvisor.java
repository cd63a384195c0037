package io.github.redislock.annotation;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.RedlockTemplate;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.StringValueResolver;

/**
 * The Spring AOP advisor for {@link DistributedLock}: a pointcut on annotated methods and an
 * interceptor that delegates to {@link RedisLockTemplate}. Works with or without AspectJ. Its order
 * decides where the lock sits among other advisors; keep it before (lower than) the transaction
 * advisor, so the lock is held until the transaction has completed. The auto-configuration sets it
 * from {@code redis-lock.advisor-order}, by default {@code Ordered.HIGHEST_PRECEDENCE + 1000}.
 * <p>
 * The interceptor takes the locks with {@link RedisLockTemplate#acquireAll} (or {@code tryAcquireAll} for
 * {@code SKIP}) rather than {@link RedisLockTemplate#execute}: several keys are taken all or nothing, and a
 * release may be deferred to the end of a surrounding transaction.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor {

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
     * @param template supplies the lock template on first use (so the advisor can be created early)
     * @param placeholders resolves {@code ${...}} in durations; may be {@code null}
     * @param beanReferences resolves {@code @bean} in key expressions; {@code null} refuses bean references
     */
    public DistributedLockAdvisor(Supplier<RedisLockTemplate> template, @Nullable StringValueResolver placeholders,
            @Nullable BeanFactory beanReferences, int order) {
        this(template, () -> {
            throw new IllegalStateException("@DistributedLock(redlock = true) needs a RedlockTemplate, and there is none: "
                    + "set redis-lock.redlock.nodes");
        }, placeholders, beanReferences, order);
    }

    /**
     * @param redlock supplies the Redlock template for {@code redlock = true} methods on first use
     */
    public DistributedLockAdvisor(Supplier<RedisLockTemplate> template, Supplier<RedlockTemplate> redlock,
            @Nullable StringValueResolver placeholders, @Nullable BeanFactory beanReferences, int order) {
        LockKeyExpressions expressions = new LockKeyExpressions(beanReferences);
        this.operations = new DistributedLockOperationSource(placeholders, new DistributedLockOperationParser(expressions));
        this.interceptor = new DistributedLockInterceptor(template, redlock, operations, new LockKeyResolver(expressions));
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
     * Resolves and checks the annotation on one method of a bean class, as the first call would.
     *
     * @throws IllegalStateException naming the class, method and attribute at fault
     */
    public void validate(Method method, Class<?> targetClass) {
        operations.find(method, targetClass);
    }

    /** Whether the method's annotation asks for Redlock ({@code redlock = true}); it must be valid. */
    public boolean usesRedlock(Method method, Class<?> targetClass) {
        DistributedLockOperation operation = operations.find(method, targetClass);
        return operation != null && operation.redlock;
    }

    /** The fixed lease the method's annotation asks for, or {@code null} for the watchdog; it must be valid. */
    java.time.@Nullable Duration leaseTime(Method method, Class<?> targetClass) {
        DistributedLockOperation operation = operations.find(method, targetClass);
        return operation == null ? null : operation.options.leaseTime();
    }
}
