package io.github.redislock.annotation;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Finds the {@link DistributedLock} that applies to a method (on the method, on an interface method
 * it implements, or on its class for public methods; directly or as a meta-annotation) and resolves
 * it once, with the {@link DistributedLockOperationParser}, like Spring's {@code AnnotationCacheOperationSource}, and
 * with the {@link LockBackends} the backend its calls lock on.
 */
final class DistributedLockOperationSource {

    private final @Nullable StringValueResolver placeholders;
    private final DistributedLockOperationParser parser;
    private final LockBackends backends;
    private final Map<MethodClassKey, Optional<DistributedLockOperation>> cache = new ConcurrentHashMap<>();

    /** @param placeholders resolves {@code ${...}} in durations; {@code null} leaves them as they are */
    DistributedLockOperationSource(@Nullable StringValueResolver placeholders, DistributedLockOperationParser parser,
            LockBackends backends) {
        this.placeholders = placeholders;
        this.parser = parser;
        this.backends = backends;
    }

    /**
     * The operation for a call, with its backend, or {@code null} when the method is not locked.
     *
     * @throws IllegalStateException naming the method, when its annotation is broken or names no backend it can use
     */
    @Nullable DistributedLockOperation find(Method method, Class<?> targetClass) {
        MethodClassKey key = new MethodClassKey(method, targetClass);
        Optional<DistributedLockOperation> cached = cache.get(key);
        if (cached == null) {
            // not computeIfAbsent: resolving the backend may create beans, whose initialisation may call locked methods
            cached = Optional.ofNullable(load(method, targetClass));
            Optional<DistributedLockOperation> raced = cache.putIfAbsent(key, cached);
            cached = raced != null ? raced : cached;
        }
        return cached.orElse(null);
    }

    private @Nullable DistributedLockOperation load(Method method, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        DistributedLock lock = annotation(specific, targetClass);
        if (lock == null) {
            return null;
        }
        String where = "@DistributedLock on " + DistributedLockOperation.describe(specific, targetClass);
        DistributedLockOperation operation = parser.parse(specific, targetClass, lock,
                resolve(lock.waitTime(), "waitTime", where), resolve(lock.leaseTime(), "leaseTime", where),
                resolve(lock.holdAtLeast(), "holdAtLeast", where));
        return operation.withBackend(backends.resolve(operation));
    }

    static @Nullable DistributedLock annotation(Method method, @Nullable Class<?> targetClass) {
        DistributedLock onMethod = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
        if (onMethod != null) {
            return onMethod;
        }
        if (!Modifier.isPublic(method.getModifiers()) || Modifier.isStatic(method.getModifiers())
                || ReflectionUtils.isObjectMethod(method)) {
            // a class-level lock does not cover toString(), equals() or hashCode(), even overridden
            return null;
        }
        Class<?> owner = targetClass != null ? targetClass : method.getDeclaringClass();
        return AnnotatedElementUtils.findMergedAnnotation(owner, DistributedLock.class);
    }

    private @Nullable String resolve(String value, String attribute, String where) {
        if (placeholders == null || value.isEmpty()) {
            return value;
        }
        try {
            return placeholders.resolveStringValue(value);
        } catch (RuntimeException e) {
            throw new IllegalStateException(where + ": " + attribute + " = \"" + value + "\" cannot be resolved: "
                    + e.getMessage(), e);
        }
    }
}
