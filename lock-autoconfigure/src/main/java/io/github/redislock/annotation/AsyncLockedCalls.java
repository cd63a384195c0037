package io.github.redislock.annotation;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.github.redislock.core.AsyncHold;
import io.github.redislock.core.ReactiveRedisLocks;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.util.ClassUtils;

/**
 * Locked calls of methods whose work ends after they return: a {@link CompletionStage} (held from the call until the
 * stage completes) or a Reactor {@code Mono}/{@code Flux} (held from each subscription until it completes, fails or
 * is cancelled). The blocking locked call of {@link DistributedLockInterceptor} runs unchanged on a holder thread of
 * the template's {@link io.github.redislock.core.RedisLockTemplate#asyncExecutor() asyncExecutor}: it acquires (any
 * lock type, any keys, skipping as configured), invokes the method, waits there until the work ends and releases. The
 * caller's thread never waits for the lock.
 */
final class AsyncLockedCalls {

    /** How a method's result is held. */
    enum Kind { BLOCKING, STAGE, MONO, FLUX }

    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
            AsyncLockedCalls.class.getClassLoader());

    /** The blocking locked call of an invocation: acquire, proceed, release. */
    @FunctionalInterface
    interface LockedCall {

        Object invoke(MethodInvocation invocation) throws Throwable;
    }

    /** What proceed() of the held invocation does. */
    @FunctionalInterface
    private interface LockedWork {

        Object call() throws Throwable;
    }

    private AsyncLockedCalls() {
    }

    static Kind kind(Class<?> returnType) {
        if (returnType == CompletionStage.class || returnType == CompletableFuture.class) {
            return Kind.STAGE;
        }
        if (!isPublisher(returnType)) {
            return Kind.BLOCKING;
        }
        return switch (returnType.getName()) {
            case "reactor.core.publisher.Mono" -> Kind.MONO;
            default -> Kind.FLUX; // Flux or Publisher: refusal() refused any other
        };
    }

    /** Why a method returning this type cannot be locked, or {@code null} if it can. */
    static String refusal(Class<?> returnType) {
        if (CompletionStage.class.isAssignableFrom(returnType) && kind(returnType) != Kind.STAGE) {
            return "returns " + returnType.getName() + ", a CompletionStage the lock cannot hand back; declare "
                    + "CompletableFuture or CompletionStage as the return type";
        }
        if (!isPublisher(returnType)) {
            return null;
        }
        if (!REACTOR_PRESENT) {
            return "returns " + returnType.getName() + ", a reactive type, and holding a lock until a publisher ends needs "
                    + "Reactor (io.projectreactor:reactor-core) on the classpath";
        }
        String name = returnType.getName();
        if (!name.equals("reactor.core.publisher.Mono") && !name.equals("reactor.core.publisher.Flux")
                && !name.equals("org.reactivestreams.Publisher")) {
            return "returns " + name + ", a reactive type other than Mono, Flux or Publisher; declare one of those "
                    + "(e.g. Flux.from(...)) so the lock can be held until it ends";
        }
        return null;
    }

    /** Calls the method asynchronously; {@code kind} is not {@link Kind#BLOCKING}. */
    static Object invoke(MethodInvocation invocation, Kind kind, Executor holders, LockedCall locked) {
        if (kind == Kind.STAGE) {
            MethodInvocation call = invocableClone(invocation);
            AsyncHold<CompletionStage<?>> hold = AsyncHold.start(holders,
                    h -> (CompletionStage<?>) lockedCall(h, call, locked));
            return hold.completion();
        }
        return kind == Kind.MONO ? Reactor.mono(invocation, holders, locked) : Reactor.flux(invocation, holders, locked);
    }

    /**
     * Runs the blocking locked call on the holder thread with a {@code proceed()} that starts the work and holds the
     * lock until it ended.
     *
     * @return what the locked call returned when it skipped the method (an empty result), else {@code null}
     */
    @SuppressWarnings("unchecked")
    private static <S> Object lockedCall(AsyncHold<S> hold, MethodInvocation call, LockedCall locked) throws Throwable {
        boolean[] proceeded = {false};
        Object result = locked.invoke(new HeldInvocation(call, () -> {
            proceeded[0] = true;
            hold.hold(() -> (S) call.proceed());
            return null;
        }));
        return proceeded[0] ? null : result;
    }

    /** A copy of the invocation that can proceed on another thread, and once per subscription. */
    private static MethodInvocation invocableClone(MethodInvocation invocation) {
        return invocation instanceof ProxyMethodInvocation proxy ? proxy.invocableClone() : invocation;
    }

    private static boolean isPublisher(Class<?> type) {
        if (type == null || type.isPrimitive()) {
            return false;
        }
        if (type.getName().equals("org.reactivestreams.Publisher") || isPublisher(type.getSuperclass())) {
            return true;
        }
        for (Class<?> implemented : type.getInterfaces()) {
            if (isPublisher(implemented)) {
                return true;
            }
        }
        return false;
    }

    /** Loaded only for Mono/Flux methods, which refusal() allows only with Reactor present. */
    private static final class Reactor {

        static Object mono(MethodInvocation invocation, Executor holders, LockedCall locked) {
            return ReactiveRedisLocks.<Object>mono(() -> start(invocation, holders, locked));
        }

        static Object flux(MethodInvocation invocation, Executor holders, LockedCall locked) {
            return ReactiveRedisLocks.<Object>flux(() -> start(invocation, holders, locked));
        }

        @SuppressWarnings("unchecked")
        private static AsyncHold<? extends Publisher<Object>> start(MethodInvocation invocation, Executor holders,
                LockedCall locked) {
            MethodInvocation call = invocableClone(invocation);
            return AsyncHold.<Publisher<Object>>start(holders, h -> (Publisher<Object>) lockedCall(h, call, locked));
        }
    }

    /** The invocation as the blocking locked call sees it, with the work's start and hold behind proceed(). */
    private record HeldInvocation(MethodInvocation call, LockedWork work) implements MethodInvocation {

        @Override
        public Method getMethod() {
            return call.getMethod();
        }

        @Override
        public Object[] getArguments() {
            return call.getArguments(); // the same array: a @FencingToken argument set on it reaches the method
        }

        @Override
        public Object proceed() throws Throwable {
            return work.call();
        }

        @Override
        public Object getThis() {
            return call.getThis();
        }

        @Override
        public AccessibleObject getStaticPart() {
            return call.getStaticPart();
        }
    }
}
