package io.github.redislock.annotation;

import java.util.Optional;
import java.util.SortedSet;
import java.util.function.Supplier;

import io.github.redislock.core.LockMode;
import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.RedisLockTemplate;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

/**
 * Wraps a {@link DistributedLock} method in acquire, run, release. The locking itself, all keys or none, is
 * {@link RedisLockTemplate#acquireAll}'s; this adds what belongs to a method call: the keys from its
 * arguments, skipping it, its fencing token and {@link LockContext}, and a release deferred to the end of the
 * surrounding transaction.
 */
final class DistributedLockInterceptor implements MethodInterceptor {

    private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            DistributedLockInterceptor.class.getClassLoader());

    private final Supplier<RedisLockTemplate> template;
    private final DistributedLockOperationSource operations;
    private final LockKeyResolver keyResolver;

    DistributedLockInterceptor(Supplier<RedisLockTemplate> template, DistributedLockOperationSource operations,
            LockKeyResolver keyResolver) {
        this.template = template;
        this.operations = operations;
        this.keyResolver = keyResolver;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
        DistributedLockOperation operation = operations.find(invocation.getMethod(), targetClass);
        if (operation == null) {
            return invocation.proceed();
        }
        Object[] args = invocation.getArguments();
        SortedSet<String> keys = keyResolver.keys(operation, args, targetClass);
        MultiLockHandle locks;
        if (operation.type == LockType.FAIR) {
            Optional<MultiLockHandle> taken = FairLockCall.acquire(template.get(), keys.first(), operation.options,
                    operation.onFailure != OnFailure.SKIP);
            if (taken.isEmpty()) {
                return SkippedResults.forReturnType(operation.method.getReturnType());
            }
            locks = taken.get();
        } else if (operation.onFailure == OnFailure.SKIP) {
            Optional<MultiLockHandle> taken = tryAcquireAll(operation, keys);
            if (taken.isEmpty()) {
                return SkippedResults.forReturnType(operation.method.getReturnType());
            }
            locks = taken.get();
        } else {
            locks = acquireAll(operation, keys);
        }
        if (operation.fencingTokenParameter >= 0) {
            args[operation.fencingTokenParameter] = locks.fencingToken(keys.first());
            if (invocation instanceof ProxyMethodInvocation proxyInvocation) {
                proxyInvocation.setArguments(args);
            }
        }
        Object result;
        LockContext.push(locks.fencingTokens());
        try {
            result = invocation.proceed();
        } catch (Throwable failure) {
            LockContext.pop();
            release(operation, locks, failure);
            throw failure;
        }
        LockContext.pop();
        release(operation, locks, null);
        return result;
    }

    /** Takes the keys with the operation's lock type: the exclusive lock, or a side of the read/write lock. */
    private MultiLockHandle acquireAll(DistributedLockOperation operation, SortedSet<String> keys) {
        return switch (operation.type) {
            case READ -> template.get().acquireAll(keys, operation.options, LockMode.READ);
            case WRITE -> template.get().acquireAll(keys, operation.options, LockMode.WRITE);
            default -> template.get().acquireAll(keys, operation.options);
        };
    }

    private Optional<MultiLockHandle> tryAcquireAll(DistributedLockOperation operation, SortedSet<String> keys) {
        return switch (operation.type) {
            case READ -> template.get().tryAcquireAll(keys, operation.options, LockMode.READ);
            case WRITE -> template.get().tryAcquireAll(keys, operation.options, LockMode.WRITE);
            default -> template.get().tryAcquireAll(keys, operation.options);
        };
    }

    /** Releases now, or once the surrounding transaction completes; a release failure is added to {@code failure}. */
    private static void release(DistributedLockOperation operation, MultiLockHandle locks, Throwable failure) {
        if (TRANSACTIONS_PRESENT && TransactionalRelease.deferToOuterTransaction(locks::release,
                operation.description + " " + locks.keys())) {
            return;
        }
        try {
            locks.release();
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }
}
