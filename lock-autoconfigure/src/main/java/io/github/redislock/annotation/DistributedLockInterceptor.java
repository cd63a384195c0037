package io.github.redislock.annotation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

/** Wraps a {@link DistributedLock} method in acquire, run, release. */
final class DistributedLockInterceptor implements MethodInterceptor {

    private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            DistributedLockInterceptor.class.getClassLoader());

    private final Supplier<RedisLockTemplate> template;
    private final DistributedLockOperationSource operations;

    DistributedLockInterceptor(Supplier<RedisLockTemplate> template, DistributedLockOperationSource operations) {
        this.template = template;
        this.operations = operations;
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
        List<LockHandle> handles = acquireAll(operation, operation.keys(args, targetClass));
        if (handles == null) {
            return operation.skippedResult();
        }
        Map<String, Long> tokens = new LinkedHashMap<>();
        handles.forEach(handle -> tokens.put(handle.key(), handle.fencingToken()));
        if (operation.fencingTokenParameter >= 0) {
            args[operation.fencingTokenParameter] = handles.get(0).fencingToken();
            if (invocation instanceof ProxyMethodInvocation proxyInvocation) {
                proxyInvocation.setArguments(args);
            }
        }
        Object result;
        LockContext.push(tokens);
        try {
            result = invocation.proceed();
        } catch (Throwable failure) {
            LockContext.pop();
            release(operation, handles, failure);
            throw failure;
        }
        LockContext.pop();
        release(operation, handles, null);
        return result;
    }

    /** All keys or none, in sorted order with one deadline; {@code null} when skipped. */
    private List<LockHandle> acquireAll(DistributedLockOperation operation, Iterable<String> keys) {
        RedisLockTemplate locks = template.get();
        Duration wait = operation.waitTime != null ? operation.waitTime : locks.config().defaultWaitTime();
        List<LockHandle> handles = new ArrayList<>();
        long start = System.nanoTime();
        try {
            for (String key : keys) {
                Optional<LockHandle> handle = locks.tryAcquire(key, remaining(operation, wait, start));
                if (handle.isEmpty()) {
                    releaseQuietly(handles);
                    if (operation.onFailure == OnFailure.SKIP) {
                        return null;
                    }
                    throw new LockNotAcquiredException(key, wait);
                }
                handles.add(handle.get());
            }
            return handles;
        } catch (RuntimeException e) {
            releaseQuietly(handles);
            throw e;
        }
    }

    /** The keys share one deadline: each waits only for what is left of the whole wait. */
    private static LockOptions remaining(DistributedLockOperation operation, Duration wait, long start) {
        Duration left = wait.minusNanos(System.nanoTime() - start);
        LockOptions options = LockOptions.waitFor(left.isNegative() ? Duration.ZERO : left);
        return operation.options.leaseTime() != null ? options.withLease(operation.options.leaseTime()) : options;
    }

    private static void release(DistributedLockOperation operation, List<LockHandle> handles, Throwable failure) {
        if (TRANSACTIONS_PRESENT && TransactionalRelease.deferToOuterTransaction(() -> releaseAll(handles, null),
                operation.description + " " + keysOf(handles))) {
            return;
        }
        releaseAll(handles, failure);
    }

    /** Releases in reverse order; the first release failure is thrown after all were tried, or added to {@code failure}. */
    private static void releaseAll(List<LockHandle> handles, Throwable failure) {
        RuntimeException first = null;
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                handles.get(i).release();
            } catch (RuntimeException e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static List<String> keysOf(List<LockHandle> handles) {
        return handles.stream().map(LockHandle::key).toList();
    }

    private static void releaseQuietly(List<LockHandle> handles) {
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                handles.get(i).release();
            } catch (RuntimeException ignored) {
                // held only for an instant while acquiring the others; its loss is of no consequence
            }
        }
    }
}
