package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.Supplier;

import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.PermitHandle;
import io.github.redislock.core.RedisSemaphore;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.RedlockTemplate;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
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
    private final Supplier<RedlockTemplate> redlock;
    private final DistributedLockOperationSource operations;
    private final LockKeyResolver keyResolver;

    DistributedLockInterceptor(Supplier<RedisLockTemplate> template, Supplier<RedlockTemplate> redlock,
            DistributedLockOperationSource operations, LockKeyResolver keyResolver) {
        this.template = template;
        this.redlock = redlock;
        this.operations = operations;
        this.keyResolver = keyResolver;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
        DistributedLockOperation operation = operations.find(invocation.getMethod(), targetClass);
        if (operation == null) {
            return invocation.proceed();
        }
        if (operation.kind != AsyncLockedCalls.Kind.BLOCKING) {
            return AsyncLockedCalls.invoke(invocation, operation.kind, template.get().asyncExecutor(),
                    call -> invokeLocked(call, operation, targetClass));
        }
        return invokeLocked(invocation, operation, targetClass);
    }

    /** Acquires, runs the method and releases, blocking the calling thread; also the holder thread's work for async methods. */
    private @Nullable Object invokeLocked(MethodInvocation invocation, DistributedLockOperation operation, Class<?> targetClass)
            throws Throwable {
        Object[] args = invocation.getArguments();
        SortedSet<String> keys = keyResolver.keys(operation, args, targetClass);
        if (operation.permits > 0) {
            return invokeWithPermit(invocation, operation, keys.first(), args);
        }
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
        if (operation.redlock) {
            return redlock.get().acquireAll(keys, operation.options);
        }
        return switch (operation.type) {
            case READ -> template.get().acquireAll(keys, operation.options, LockType.READ);
            case WRITE -> template.get().acquireAll(keys, operation.options, LockType.WRITE);
            default -> template.get().acquireAll(keys, operation.options);
        };
    }

    private Optional<MultiLockHandle> tryAcquireAll(DistributedLockOperation operation, SortedSet<String> keys) {
        if (operation.redlock) {
            return redlock.get().tryAcquireAll(keys, operation.options);
        }
        return switch (operation.type) {
            case READ -> template.get().tryAcquireAll(keys, operation.options, LockType.READ);
            case WRITE -> template.get().tryAcquireAll(keys, operation.options, LockType.WRITE);
            default -> template.get().tryAcquireAll(keys, operation.options);
        };
    }

    /** Runs the call holding one permit of the key's semaphore, as {@link #invoke} runs it holding locks. */
    private @Nullable Object invokeWithPermit(MethodInvocation invocation, DistributedLockOperation operation, String key,
            Object[] args) throws Throwable {
        RedisSemaphore semaphore = template.get().semaphore(key, operation.permits);
        PermitHandle permit;
        if (operation.onFailure == OnFailure.SKIP) {
            Optional<PermitHandle> taken = semaphore.tryAcquire(operation.options);
            if (taken.isEmpty()) {
                return SkippedResults.forReturnType(operation.method.getReturnType());
            }
            permit = taken.get();
        } else {
            permit = semaphore.acquire(operation.options);
        }
        if (operation.fencingTokenParameter >= 0) {
            args[operation.fencingTokenParameter] = permit.fencingToken();
            if (invocation instanceof ProxyMethodInvocation proxyInvocation) {
                proxyInvocation.setArguments(args);
            }
        }
        Object result;
        LockContext.push(Map.of(key, permit.fencingToken()));
        try {
            result = invocation.proceed();
        } catch (Throwable failure) {
            LockContext.pop();
            release(operation, permit::release, key, failure);
            throw failure;
        }
        LockContext.pop();
        release(operation, permit::release, key, null);
        return result;
    }

    /** Releases a permit now, or once the surrounding transaction completes; a failure is added to {@code failure}. */
    private static void release(DistributedLockOperation operation, Runnable release, String key,
            @Nullable Throwable failure) {
        if (TRANSACTIONS_PRESENT && TransactionalRelease.deferToOuterTransaction(release, operation.description + " [" + key + "]")) {
            return;
        }
        try {
            release.run();
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    /** Releases now, or once the surrounding transaction completes; a release failure is added to {@code failure}. */
    private static void release(DistributedLockOperation operation, MultiLockHandle locks,
            @Nullable Throwable failure) {
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
