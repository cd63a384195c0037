package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import org.jspecify.annotations.Nullable;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

/**
 * Turns a {@link DistributedLock} into a {@link DistributedLockOperation}, once per method, and refuses what
 * cannot work: every check that can be made before the first call is made here, so a broken annotation stops
 * the application at start-up (as Spring's {@code SpringCacheAnnotationParser} does for the cache annotations).
 */
final class DistributedLockOperationParser {

    private final LockKeyExpressions expressions;

    DistributedLockOperationParser(LockKeyExpressions expressions) {
        this.expressions = expressions;
    }

    /**
     * Resolves and checks an annotation.
     *
     * @param method the method the annotation applies to (the most specific one for {@code targetClass})
     * @param resolvedWait the wait time with placeholders resolved, {@code resolvedLease} likewise
     * @throws IllegalStateException naming the class, method and attribute at fault
     */
    DistributedLockOperation parse(Method method, @Nullable Class<?> targetClass, DistributedLock lock,
            @Nullable String resolvedWait, @Nullable String resolvedLease) {
        return parse(method, targetClass, lock, resolvedWait, resolvedLease, lock.holdAtLeast());
    }

    /** Like {@link #parse(Method, Class, DistributedLock, String, String)}, with {@code holdAtLeast} resolved too. */
    DistributedLockOperation parse(Method method, @Nullable Class<?> targetClass, DistributedLock lock,
            @Nullable String resolvedWait, @Nullable String resolvedLease, @Nullable String resolvedHoldAtLeast) {
        String where = "@DistributedLock on " + DistributedLockOperation.describe(method, targetClass);
        checkPermits(lock, where);
        Duration wait;
        Duration lease;
        Duration holdAtLeast;
        try {
            wait = AnnotationDurations.parse(resolvedWait, "waitTime");
            lease = AnnotationDurations.parse(resolvedLease, "leaseTime");
            holdAtLeast = AnnotationDurations.parse(resolvedHoldAtLeast, "holdAtLeast");
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + e.getMessage(), e);
        }
        if (lease != null && lease.toMillis() < 1) {
            throw new IllegalStateException(where + ": leaseTime = \"" + lock.leaseTime() + "\" must be at least 1ms");
        }
        LockOptions options = wait == null ? LockOptions.defaults() : LockOptions.waitFor(wait);
        if (lease != null) {
            options = options.withLease(lease);
        }
        if (holdAtLeast != null) {
            checkHoldAtLeast(lock, holdAtLeast, lease, where);
            options = options.withHoldAtLeast(holdAtLeast);
        }
        Class<?> returnType = method.getReturnType();
        String asyncRefusal = AsyncLockedCalls.refusal(method);
        if (asyncRefusal != null) {
            throw new IllegalStateException(where + ": " + asyncRefusal);
        }
        if (lock.onFailure() == OnFailure.SKIP && KotlinDetector.isSuspendingFunction(method)) {
            checkSkippedSuspendResult(method, where);
        }
        if (lock.onFailure() == OnFailure.SKIP && returnType.isPrimitive() && returnType != void.class) {
            throw new IllegalStateException(where + ": onFailure = SKIP cannot return a value of primitive type "
                    + returnType.getName() + "; return a wrapper (" + ClassUtils.resolvePrimitiveIfNecessary(returnType).getSimpleName()
                    + "), Optional or void, or use onFailure = THROW");
        }
        Expression[] keys = Stream.of(lock.key()).map(key -> {
            if (key.isBlank()) {
                throw new IllegalStateException(where + ": key must not be blank");
            }
            Expression parsed = expressions.parse(key, where);
            refuseParameterWithoutText(parsed, method, where);
            return parsed;
        }).toArray(Expression[]::new);
        int fencing = fencingTokenParameter(method, where);
        if (fencing >= 0 && keys.length > 1) {
            throw new IllegalStateException(where + ": @FencingToken needs a single key, but there are " + keys.length
                    + "; read each token with LockContext.fencingToken(key)");
        }
        if (lock.type() == LockType.FAIR && keys.length > 1) {
            throw new IllegalStateException(where + ": type = FAIR takes one key, but there are " + keys.length
                    + "; a fair lock queues for one key (use EXCLUSIVE to lock several all or nothing)");
        }
        String name = lock.name();
        if (keys.length == 0 && name.isEmpty()) {
            // per method: one lock for the method wherever it is called from, shared by its overloads
            name = ClassUtils.getUserClass(method.getDeclaringClass()).getName() + "." + method.getName();
        }
        if (keys.length == 0) {
            try {
                RedisLockTemplate.validateKey(name);
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(where + ": name \"" + name + "\": " + e.getMessage(), e);
            }
        }
        // the metric name: the annotation's name, else the method; never the key, whose values are unbounded
        String metricName = !lock.name().isEmpty() ? lock.name()
                : ClassUtils.getUserClass(targetClass != null ? targetClass : method.getDeclaringClass()).getSimpleName()
                        + "." + method.getName();
        options = options.withName(metricName);
        return new DistributedLockOperation(method, where, name, List.of(keys), options, lock.onFailure(), fencing,
                lock.type(), lock.permits(), lock.locks().trim());
    }

    /** {@code holdAtLeast} needs a positive duration no longer than a fixed lease, on an exclusive lock. */
    private static void checkHoldAtLeast(DistributedLock lock, Duration holdAtLeast, @Nullable Duration lease, String where) {
        if (holdAtLeast.toMillis() < 1) {
            throw new IllegalStateException(where + ": holdAtLeast = \"" + lock.holdAtLeast() + "\" must be at least 1ms");
        }
        if (lease != null && holdAtLeast.compareTo(lease) > 0) {
            throw new IllegalStateException(where + ": holdAtLeast = \"" + lock.holdAtLeast() + "\" is longer than leaseTime = \""
                    + lock.leaseTime() + "\": the lock cannot stay held longer than its lease; raise leaseTime or lower holdAtLeast");
        }
        if (lock.type() != LockType.EXCLUSIVE || lock.permits() > 0) {
            throw new IllegalStateException(where + ": holdAtLeast works with the exclusive lock only, not with "
                    + (lock.permits() > 0 ? "a semaphore (permits = " + lock.permits() + ")" : "type = " + lock.type())
                    + "; remove one of them");
        }
    }

    /** A semaphore ({@code permits} of 1 or more) takes one key and no lock type: refuses anything else. */
    private static void checkPermits(DistributedLock lock, String where) {
        if (lock.permits() == 0) {
            if (lock.type() == LockType.SEMAPHORE) {
                throw new IllegalStateException(where + ": type = SEMAPHORE needs permits = N (1 or more): how many calls "
                        + "may hold the semaphore at once");
            }
            return;
        }
        if (lock.permits() < 0) {
            throw new IllegalStateException(where + ": permits = " + lock.permits() + " must be 1 or more for a semaphore, "
                    + "or 0 (the default) for a lock");
        }
        if (lock.type() != LockType.EXCLUSIVE && lock.type() != LockType.SEMAPHORE) {
            throw new IllegalStateException(where + ": permits = " + lock.permits() + " makes it a semaphore, which cannot "
                    + "be combined with type = " + lock.type() + "; remove one of them");
        }
        if (lock.key().length > 1) {
            throw new IllegalStateException(where + ": permits = " + lock.permits() + " makes it a semaphore, which takes "
                    + "a single key, but there are " + lock.key().length);
        }
    }

    /**
     * Refuses a key that is a bare parameter ({@code #customer}) whose declared type is certain to have
     * no text of its own; other values are checked at each call.
     */
    private void refuseParameterWithoutText(Expression key, Method method, String where) {
        Class<?> declared = expressions.bareParameterType(key, method);
        Class<?> atFault = declared == null ? null : LockKeyValues.certainlyWithoutText(declared);
        if (atFault != null) {
            throw new IllegalStateException(where + ": key expression \"" + key.getExpressionString() + "\" is a parameter of type "
                    + declared.getTypeName() + ", and " + atFault.getName() + " does not override toString(): its text ("
                    + atFault.getSimpleName() + "@...) differs between equal values and between JVMs, so the lock would not "
                    + "exclude; key on one of its properties (e.g. \"" + key.getExpressionString() + ".id\") or override toString() in "
                    + atFault.getName());
        }
    }

    /**
     * A skipped suspend function returns {@code null} (an empty {@code Flow} when it returns one): refuses a
     * non-nullable return type other than {@code Unit}, where that null would break the caller.
     */
    private static void checkSkippedSuspendResult(Method method, String where) {
        MethodParameter result = new MethodParameter(method, -1);
        Class<?> type;
        try {
            type = result.getParameterType();
        } catch (RuntimeException | LinkageError e) {
            return; // not a class Kotlin reflection can read
        }
        String name = type.getName();
        if (result.isOptional() || name.equals("kotlin.Unit") || name.equals("kotlinx.coroutines.flow.Flow")
                || type == Object.class) {
            return;
        }
        throw new IllegalStateException(where + ": onFailure = SKIP makes a skipped call return null, but this suspend "
                + "function returns the non-nullable " + type.getSimpleName() + "; declare it nullable ("
                + type.getSimpleName() + "?) or use onFailure = THROW");
    }

    private static int fencingTokenParameter(Method method, String where) {
        int found = -1;
        for (int i = 0; i < method.getParameterCount(); i++) {
            if (MergedAnnotations.from(method.getParameters()[i]).isPresent(FencingToken.class)) {
                Class<?> type = method.getParameterTypes()[i];
                if (type != long.class && type != Long.class) {
                    throw new IllegalStateException(where + ": the @FencingToken parameter '" + method.getParameters()[i].getName()
                            + "' must be long or Long, not " + type.getSimpleName());
                }
                if (found >= 0) {
                    throw new IllegalStateException(where + ": only one parameter may be annotated with @FencingToken");
                }
                found = i;
            }
        }
        return found;
    }
}
