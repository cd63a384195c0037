package io.github.redislock.test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;

/**
 * Runs the Redis a test class asks for with {@link WithRedis}, {@link WithRedisCluster},
 * {@link WithRedisSentinel} or {@link WithRedisNodes}, and hands it to the test: into its fields of that type (static fields
 * before {@code @BeforeAll}, instance fields before {@code @BeforeEach}) and to the methods that take
 * it as a parameter. It also sets the test's {@link PerTest} fields: its own key and threads.
 * <p>
 * The processes are started once per class (or once per test with {@code freshForEachTest}) and kept
 * in the JUnit store of that class (or test), which closes them when it ends: a failing test or
 * {@code @BeforeAll} never leaves a {@code redis-server} behind.
 */
public final class RedisExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RedisExtension.class);

    private static final List<Class<? extends AutoCloseable>> TYPES =
            List.of(RedisServerProcess.class, RedisClusterProcesses.class, RedisSentinelProcesses.class, RedisNodes.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        injectFields(context, null);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        injectFields(context, context.getRequiredTestInstance());
        setPerTestFields(context);
    }

    /** Stops the test's threads: after its {@code @AfterEach} methods, before its stored clients are closed. */
    @Override
    public void afterEach(ExtensionContext context) {
        ExecutorService threads = context.getStore(NAMESPACE).remove(ExecutorService.class, ExecutorService.class);
        if (threads != null) {
            threads.shutdownNow();
        }
    }

    private static void setPerTestFields(ExtensionContext context) {
        Object instance = context.getRequiredTestInstance();
        for (Field field : AnnotationSupport.findAnnotatedFields(context.getRequiredTestClass(), PerTest.class)) {
            if (Modifier.isStatic(field.getModifiers())) {
                throw new IllegalStateException("@PerTest sets instance fields, not the static " + field);
            }
            if (field.getType() == String.class) {
                set(field, instance, context.getRequiredTestMethod().getName());
            } else if (field.getType() == ExecutorService.class) {
                set(field, instance, context.getStore(NAMESPACE).computeIfAbsent(ExecutorService.class,
                        type -> Executors.newCachedThreadPool(), ExecutorService.class));
            } else {
                throw new IllegalStateException("@PerTest sets String and ExecutorService fields, not " + field);
            }
        }
    }

    /**
     * The Redis the test class of {@code context} asks for, as a {@link RedisServerProcess},
     * {@link RedisClusterProcesses} or {@link RedisSentinelProcesses}, started if it is not yet;
     * empty where the class asks for none of {@code type}, or for one per test and {@code context} is
     * not a test's. For extensions that build clients on it.
     */
    public static <T extends AutoCloseable> Optional<T> running(ExtensionContext context, Class<T> type) {
        return wanted(context.getRequiredTestClass(), type)
                .filter(wanted -> !wanted.freshForEachTest() || context.getTestMethod().isPresent())
                // a lookup in a test's store also sees its class's store
                .map(wanted -> context.getStore(NAMESPACE).computeIfAbsent(type, key -> type.cast(wanted.start().get()), type));
    }

    private static void injectFields(ExtensionContext context, Object instance) {
        for (Class<? extends AutoCloseable> type : TYPES) {
            running(context, type).ifPresent(redis -> fields(context.getRequiredTestClass(), type, instance == null)
                    .forEach(field -> set(field, instance, redis)));
        }
    }

    /** The non-final fields of {@code type} declared in {@code testClass} or its superclasses, static or instance. */
    public static List<Field> fields(Class<?> testClass, Class<?> type, boolean isStatic) {
        return ReflectionSupport.findFields(testClass, field -> field.getType() == type
                && Modifier.isStatic(field.getModifiers()) == isStatic && !Modifier.isFinal(field.getModifiers()),
                HierarchyTraversalMode.TOP_DOWN);
    }

    private static void set(Field field, Object instance, Object value) {
        try {
            field.setAccessible(true);
            field.set(instance, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot set " + field, e);
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return TYPES.contains(parameter.getParameter().getType());
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        @SuppressWarnings("unchecked")
        Class<? extends AutoCloseable> type = (Class<? extends AutoCloseable>) parameter.getParameter().getType();
        return running(context, type).orElseThrow(() -> new ParameterResolutionException("No " + type.getSimpleName()
                + " is running for " + parameter.getDeclaringExecutable() + ": annotate the class with "
                + annotationFor(type) + (context.getTestMethod().isEmpty() ? " without freshForEachTest" : "")));
    }

    private record Wanted(boolean freshForEachTest, Supplier<AutoCloseable> start) {
    }

    private static Optional<Wanted> wanted(Class<?> testClass, Class<?> type) {
        if (type == RedisServerProcess.class) {
            return AnnotationSupport.findAnnotation(testClass, WithRedis.class).map(redis -> new Wanted(
                    redis.freshForEachTest(), () -> RedisServerProcess.start(List.of(redis.args()))));
        }
        if (type == RedisClusterProcesses.class) {
            return AnnotationSupport.findAnnotation(testClass, WithRedisCluster.class).map(cluster -> new Wanted(
                    cluster.freshForEachTest(), () -> RedisClusterProcesses.start(cluster.masters())));
        }
        if (type == RedisSentinelProcesses.class) {
            return AnnotationSupport.findAnnotation(testClass, WithRedisSentinel.class).map(sentinel -> new Wanted(
                    sentinel.freshForEachTest(), RedisSentinelProcesses::start));
        }
        if (type == RedisNodes.class) {
            return AnnotationSupport.findAnnotation(testClass, WithRedisNodes.class).map(nodes -> new Wanted(
                    nodes.freshForEachTest(), () -> RedisNodes.start(nodes.value())));
        }
        return Optional.empty();
    }

    private static String annotationFor(Class<?> type) {
        if (type == RedisClusterProcesses.class) {
            return "@WithRedisCluster";
        }
        if (type == RedisNodes.class) {
            return "@WithRedisNodes";
        }
        return type == RedisSentinelProcesses.class ? "@WithRedisSentinel" : "@WithRedis";
    }
}
