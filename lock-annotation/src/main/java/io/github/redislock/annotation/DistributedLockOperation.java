package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;

import io.github.redislock.core.LockOptions;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

/**
 * One annotated method as {@link DistributedLockOperationParser} resolved and checked it: its key expressions,
 * options and failure behaviour. Immutable, made once per method and shared by every call.
 */
final class DistributedLockOperation {

    final Method method;
    /** "@DistributedLock on com.acme.Orders.pay(long)": how every message about it begins. */
    final String description;
    /** The static prefix joined before each key; the whole key when there are no key expressions. */
    final String name;
    final List<Expression> keys;
    final LockOptions options;
    final OnFailure onFailure;
    /** The index of the {@link FencingToken} parameter, or -1. */
    final int fencingTokenParameter;
    /** The kind of lock the method takes. */
    final LockType type;
    /** A semaphore's permit limit, one permit per call; 0 for a lock. */
    final int permits;
    /** The bean name of the {@code LockOperations} the annotation names; {@code ""} for the only or primary one. */
    final String locks;
    /** Where its calls take their locks; {@code null} in an operation fresh from the parser: see {@link #backend()}. */
    private final @Nullable LockBackend backend;
    /** How a call is held: blocking, or until its future, publisher, flow or coroutine ends. */
    final AsyncLockedCalls.Kind kind;

    DistributedLockOperation(Method method, String description, String name, List<Expression> keys, LockOptions options,
            OnFailure onFailure, int fencingTokenParameter, LockType type, int permits, String locks) {
        this(method, description, name, keys, options, onFailure, fencingTokenParameter, type, permits, locks, null);
    }

    private DistributedLockOperation(Method method, String description, String name, List<Expression> keys,
            LockOptions options, OnFailure onFailure, int fencingTokenParameter, LockType type, int permits, String locks,
            @Nullable LockBackend backend) {
        this.method = method;
        this.description = description;
        this.name = name;
        this.keys = List.copyOf(keys);
        this.options = options;
        this.onFailure = onFailure;
        this.fencingTokenParameter = fencingTokenParameter;
        this.type = type;
        this.permits = permits;
        this.locks = locks;
        this.backend = backend;
        this.kind = AsyncLockedCalls.kind(method);
    }

    /**
     * Where its calls take their locks: the backend {@link #locks} names, with the verbs of {@link #type}, as
     * {@link DistributedLockOperationSource} resolved it.
     */
    LockBackend backend() {
        return Objects.requireNonNull(backend, () -> description + ": no lock backend resolved");
    }

    /** This operation with its calls taking their locks on {@code backend}. */
    DistributedLockOperation withBackend(LockBackend backend) {
        return new DistributedLockOperation(method, description, name, keys, options, onFailure, fencingTokenParameter, type,
                permits, locks, backend);
    }

    /** {@code com.acme.Orders.pay(long)}: the class the method is called on (not a proxy), the method and its parameter types. */
    static String describe(Method method, @Nullable Class<?> targetClass) {
        Class<?> owner = ClassUtils.getUserClass(targetClass != null ? targetClass : method.getDeclaringClass());
        StringBuilder sb = new StringBuilder(owner.getName()).append('.').append(method.getName()).append('(');
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            sb.append(i > 0 ? ", " : "").append(types[i].getSimpleName());
        }
        return sb.append(')').toString();
    }
}
