package io.github.redislock.annotation;

import java.util.Optional;
import java.util.SortedSet;

import io.github.redislock.core.LockOperations;
import io.github.redislock.core.MultiLockHandle;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

/**
 * Wraps a {@link DistributedLock} method in acquire, run, release. The locking itself, all keys or none, is the
 * method's backend's ({@link LockOperations#acquireAll}, or the verbs of its lock type; see {@link LockBackend}); this
 * adds what belongs to a method call: the keys from its arguments, skipping it, its fencing token and
 * {@link LockContext}, and a release deferred to the end of the surrounding transaction.
 */
final class DistributedLockInterceptor implements MethodInterceptor {

    private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            DistributedLockInterceptor.class.getClassLoader());

    private final DistributedLockOperationSource operations;
    private final LockKeyResolver keyResolver;

    DistributedLockInterceptor(DistributedLockOperationSource operations, LockKeyResolver keyResolver) {
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
            return AsyncLockedCalls.invoke(invocation, operation.kind, operation.backend().asyncExecutor(),
                    call -> invokeLocked(call, operation, targetClass));
        }
        return invokeLocked(invocation, operation, targetClass);
    }

    /** Acquires, runs the method and releases, blocking the calling thread; also the holder thread's work for async methods. */
    private @Nullable Object invokeLocked(MethodInvocation invocation, DistributedLockOperation operation, Class<?> targetClass)
            throws Throwable {
        Object[] args = invocation.getArguments();
        SortedSet<String> keys = keyResolver.keys(operation, args, targetClass);
        Optional<MultiLockHandle> taken = operation.backend().acquire(keys, operation.options,
                operation.onFailure != OnFailure.SKIP);
        if (taken.isEmpty()) {
            return SkippedResults.forReturnType(operation.method.getReturnType());
        }
        MultiLockHandle locks = taken.get();
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
