package io.github.redislock.annotation;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

import io.github.redislock.core.AsyncHold;
import io.github.redislock.core.ReactiveRedisLocks;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * Locked calls of methods whose work ends after they return: a {@link CompletionStage} (held from the call until the
 * stage completes), a Reactor {@code Mono}/{@code Flux} or a Kotlin {@code Flow} (held from each subscription or
 * collection until it completes, fails or is cancelled), or a Kotlin {@code suspend} function (held until its
 * coroutine completes, fails or is cancelled). Spring AOP runs a suspend function as a {@code Mono} (a {@code Flux}
 * when it returns a {@code Flow}) through kotlinx-coroutines-reactor, and awaits the publisher the advice returns, so
 * a suspend function is locked like a {@code Mono} method. The blocking locked call of
 * {@link DistributedLockInterceptor} runs unchanged on a holder thread of the template's {@link io.github.redislock.core.RedisLockTemplate#asyncExecutor() asyncExecutor}: it acquires (any
 * lock type, any keys, skipping as configured), invokes the method, waits there until the work ends and releases. The
 * caller's thread never waits for the lock.
 */
final class AsyncLockedCalls {

    /** How a method's result is held. */
    enum Kind { BLOCKING, STAGE, MONO, FLUX, FLOW }

    private static final String FLOW = "kotlinx.coroutines.flow.Flow";

    private static final boolean REACTOR_PRESENT = isPresent("reactor.core.publisher.Mono");

    /** Spring AOP calls suspend functions as publishers only with it (see {@code AopUtils.invokeJoinpointUsingReflection}). */
    private static final boolean COROUTINES_REACTOR_PRESENT = isPresent("kotlinx.coroutines.reactor.MonoKt");

    /** Spring calls suspend functions through Kotlin reflection ({@code CoroutinesUtils.invokeSuspendingFunction}). */
    private static final boolean KOTLIN_REFLECT_PRESENT = isPresent("kotlin.reflect.full.KClasses");

    /** The blocking locked call of an invocation: acquire, proceed, release. */
    @FunctionalInterface
    interface LockedCall {

        @Nullable Object invoke(MethodInvocation invocation) throws Throwable;
    }

    /** What proceed() of the held invocation does. */
    @FunctionalInterface
    private interface LockedWork {

        @Nullable Object call() throws Throwable;
    }

    private AsyncLockedCalls() {
    }

    /** How a call of {@code method} is held. */
    static Kind kind(Method method) {
        if (KotlinDetector.isSuspendingFunction(method)) {
            // proceed() gives the publisher Spring AOP runs the coroutine as; the proxy awaits the one returned
            return COROUTINES_REACTOR_PRESENT && KOTLIN_REFLECT_PRESENT && returnsFlow(method) ? Kind.FLUX : Kind.MONO;
        }
        if (method.getReturnType().getName().equals(FLOW)) {
            return Kind.FLOW;
        }
        return kind(method.getReturnType());
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

    /** Why {@code method} cannot be locked for what it returns, or {@code null} if it can. */
    static @Nullable String refusal(Method method) {
        boolean suspending = KotlinDetector.isSuspendingFunction(method);
        String kotlin = kotlinRefusal(suspending, method.getReturnType(), COROUTINES_REACTOR_PRESENT, KOTLIN_REFLECT_PRESENT);
        if (kotlin != null || suspending) {
            return kotlin;
        }
        return refusal(method.getReturnType());
    }

    /**
     * Why a Kotlin suspend function ({@code suspending}), or a function returning a {@code Flow}, cannot be locked
     * with the libraries present, or {@code null} if it can (also for any other method).
     */
    static @Nullable String kotlinRefusal(boolean suspending, Class<?> returnType, boolean coroutinesReactorPresent,
            boolean kotlinReflectPresent) {
        if (suspending && !coroutinesReactorPresent) {
            return "is a Kotlin suspend function, and holding a lock until its coroutine ends needs kotlinx-coroutines-reactor "
                    + "(org.jetbrains.kotlinx:kotlinx-coroutines-reactor) on the classpath, through which Spring AOP runs a "
                    + "suspend function as a Mono; add that dependency";
        }
        if (suspending && !kotlinReflectPresent) {
            return "is a Kotlin suspend function, and Spring AOP calls suspend functions through Kotlin reflection, which "
                    + "needs kotlin-reflect (org.jetbrains.kotlin:kotlin-reflect) on the classpath; add that dependency";
        }
        if (!suspending && returnType.getName().equals(FLOW) && !coroutinesReactorPresent) {
            return "returns " + FLOW + ", and holding a lock until a flow ends needs kotlinx-coroutines-reactor "
                    + "(org.jetbrains.kotlinx:kotlinx-coroutines-reactor) on the classpath; add that dependency";
        }
        if (!suspending && !returnType.getName().equals(FLOW) && implementsType(returnType, FLOW)) {
            return "returns " + returnType.getName() + ", a Flow the lock cannot hand back; declare " + FLOW
                    + " as the return type, so the lock can be held while it is collected";
        }
        return null;
    }

    /** Why a method returning this type cannot be locked, or {@code null} if it can. */
    static @Nullable String refusal(Class<?> returnType) {
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
        return switch (kind) {
            case STAGE -> {
                MethodInvocation call = invocableClone(invocation);
                AsyncHold<CompletionStage<?>> hold = AsyncHold.start(holders,
                        h -> (CompletionStage<?>) lockedCall(h, call, locked, result -> result));
                yield hold.completion();
            }
            case MONO -> Reactor.mono(invocation, holders, locked);
            case FLUX -> Reactor.flux(invocation, holders, locked);
            case FLOW -> Coroutines.flow(invocation, holders, locked);
            case BLOCKING -> throw new IllegalArgumentException("a blocking call is not asynchronous");
        };
    }

    /** Whether the suspend function's declared (Kotlin) return type is a {@code Flow}, as Spring AOP tells it. */
    private static boolean returnsFlow(Method method) {
        try {
            return new MethodParameter(method, -1).getParameterType().getName().equals(FLOW);
        } catch (RuntimeException | LinkageError e) {
            return false; // not a Kotlin class Kotlin reflection can read: Spring AOP awaits it as a single value
        }
    }

    /**
     * Runs the blocking locked call on the holder thread with a {@code proceed()} that starts the work and holds the
     * lock until it ended.
     *
     * @return what the locked call returned when it skipped the method (an empty result), else {@code null}
     */
    @SuppressWarnings("unchecked")
    private static <S> @Nullable Object lockedCall(AsyncHold<S> hold, MethodInvocation call, LockedCall locked,
            Function<Object, Object> started) throws Throwable {
        boolean[] proceeded = {false};
        Object result = locked.invoke(new HeldInvocation(call, () -> {
            proceeded[0] = true;
            hold.hold(() -> (S) started.apply(call.proceed()));
            return null;
        }));
        return proceeded[0] ? null : result;
    }

    /** A copy of the invocation that can proceed on another thread, and once per subscription. */
    private static MethodInvocation invocableClone(MethodInvocation invocation) {
        return invocation instanceof ProxyMethodInvocation proxy ? proxy.invocableClone() : invocation;
    }

    private static boolean isPublisher(Class<?> type) {
        return implementsType(type, "org.reactivestreams.Publisher");
    }

    /** Whether {@code type} is, extends or implements the type named {@code name} (looked up by name: it may be absent). */
    private static boolean implementsType(@Nullable Class<?> type, String name) {
        if (type == null || type.isPrimitive()) {
            return false;
        }
        if (type.getName().equals(name) || implementsType(type.getSuperclass(), name)) {
            return true;
        }
        for (Class<?> implemented : type.getInterfaces()) {
            if (implementsType(implemented, name)) {
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

        static Object flux(MethodInvocation invocation, Executor holders, LockedCall locked,
                Function<Object, Object> toPublisher) {
            return ReactiveRedisLocks.<Object>flux(() -> start(invocation, holders, locked, toPublisher));
        }

        private static AsyncHold<? extends Publisher<Object>> start(MethodInvocation invocation, Executor holders,
                LockedCall locked) {
            return start(invocation, holders, locked, result -> result);
        }

        @SuppressWarnings("unchecked")
        private static AsyncHold<? extends Publisher<Object>> start(MethodInvocation invocation, Executor holders,
                LockedCall locked, Function<Object, Object> toPublisher) {
            MethodInvocation call = invocableClone(invocation);
            return AsyncHold.<Publisher<Object>>start(holders,
                    h -> (Publisher<Object>) lockedCall(h, call, locked, toPublisher));
        }
    }

    /**
     * Loaded only for methods returning a Kotlin {@code Flow}, which refusal() allows only with
     * kotlinx-coroutines-reactor present: Spring's {@link ReactiveAdapterRegistry} turns the flow into a {@code Flux}
     * to hold and the held {@code Flux} back into a flow, so the lock is held per collection.
     */
    private static final class Coroutines {

        private static final ReactiveAdapter FLOWS = flowAdapter();

        static Object flow(MethodInvocation invocation, Executor holders, LockedCall locked) {
            Object held = Reactor.flux(invocation, holders, locked, flow -> flow == null ? null : FLOWS.toPublisher(flow));
            return FLOWS.fromPublisher((Publisher<?>) held);
        }

        private static ReactiveAdapter flowAdapter() {
            ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance()
                    .getAdapter(ClassUtils.resolveClassName(FLOW, AsyncLockedCalls.class.getClassLoader()));
            if (adapter == null) {
                throw new IllegalStateException("Spring has no reactive adapter for " + FLOW + ": is "
                        + "kotlinx-coroutines-reactor on the classpath?");
            }
            return adapter;
        }
    }

    private static boolean isPresent(String className) {
        return ClassUtils.isPresent(className, AsyncLockedCalls.class.getClassLoader());
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
