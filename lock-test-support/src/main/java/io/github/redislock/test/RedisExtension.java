package io.github.redislock.test;

import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Runs the Redis a test class asks for with {@link WithRedis}, {@link WithRedisCluster} or
 * {@link WithRedisSentinel}, and hands it to the methods that take it as a parameter.
 * <p>
 * The processes are started once per class (or once per test with {@code freshForEachTest}) and kept
 * in the JUnit store of that class (or test), which closes them when it ends: a failing test or
 * {@code @BeforeAll} never leaves a {@code redis-server} behind.
 */
public final class RedisExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RedisExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        startWhere(context, false);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        startWhere(context, true);
    }

    private static void startWhere(ExtensionContext context, boolean forEachTest) {
        Class<?> testClass = context.getRequiredTestClass();
        AnnotationSupport.findAnnotation(testClass, WithRedis.class)
                .filter(redis -> redis.freshForEachTest() == forEachTest)
                .ifPresent(redis -> start(context, RedisServerProcess.class, () -> RedisServerProcess.start(List.of(redis.args()))));
        AnnotationSupport.findAnnotation(testClass, WithRedisCluster.class)
                .filter(cluster -> cluster.freshForEachTest() == forEachTest)
                .ifPresent(cluster -> start(context, RedisClusterProcesses.class, () -> RedisClusterProcesses.start(cluster.masters())));
        AnnotationSupport.findAnnotation(testClass, WithRedisSentinel.class)
                .filter(sentinel -> sentinel.freshForEachTest() == forEachTest)
                .ifPresent(sentinel -> start(context, RedisSentinelProcesses.class, RedisSentinelProcesses::start));
    }

    private static <T extends AutoCloseable> void start(ExtensionContext context, Class<T> type, Supplier<T> starter) {
        // the store closes AutoCloseable values when its context ends
        context.getStore(NAMESPACE).put(type, starter.get());
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == RedisServerProcess.class || type == RedisClusterProcesses.class || type == RedisSentinelProcesses.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        // a lookup in a test's store also sees its class's store
        return Optional.ofNullable(context.getStore(NAMESPACE).get(type, type))
                .orElseThrow(() -> new ParameterResolutionException("No " + type.getSimpleName() + " is running for "
                        + parameter.getDeclaringExecutable() + ": annotate the class with " + annotationFor(type)
                        + (context.getTestMethod().isEmpty() ? " without freshForEachTest" : "")));
    }

    private static String annotationFor(Class<?> type) {
        if (type == RedisClusterProcesses.class) {
            return "@WithRedisCluster";
        }
        return type == RedisSentinelProcesses.class ? "@WithRedisSentinel" : "@WithRedis";
    }
}
