package io.github.redislock.core;

import java.util.Optional;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisExtension;
import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Connects a test class to the Redis that {@link RedisExtension} runs for it: each field of type
 * {@link RedisLockTemplate} or {@link StringRedisTemplate} gets a client of its own (a connection pool
 * of its own, so two lock templates are two contenders), and a {@link RedisClients} field gets the
 * clients themselves, for tests that make more. Static fields are filled before {@code @BeforeAll}
 * and closed after the class, instance fields before each test and closed after it.
 */
final class RedisClientsExtension implements BeforeAllCallback, BeforeEachCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RedisClientsExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        connect(context, null);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        connect(context, context.getRequiredTestInstance());
    }

    private static void connect(ExtensionContext context, Object instance) {
        Class<?> testClass = context.getRequiredTestClass();
        boolean isStatic = instance == null;
        if (RedisExtension.fields(testClass, RedisLockTemplate.class, isStatic).isEmpty()
                && RedisExtension.fields(testClass, StringRedisTemplate.class, isStatic).isEmpty()
                && RedisExtension.fields(testClass, RedisClients.class, isStatic).isEmpty()) {
            return;
        }
        RedisClients clients = clientsFor(context).orElseThrow(() -> new IllegalStateException(testClass.getSimpleName()
                + " has client fields but no Redis" + (isStatic ? " for the whole class" : "")
                + ": annotate it with @WithRedis, @WithRedisCluster or @WithRedisSentinel"));
        // the store closes the clients (and the templates they made) when this class or test ends
        context.getStore(NAMESPACE).put(RedisClients.class, clients);
        RedisExtension.fields(testClass, RedisClients.class, isStatic).forEach(field -> set(field, instance, clients));
        RedisExtension.fields(testClass, RedisLockTemplate.class, isStatic)
                .forEach(field -> set(field, instance, clients.lockTemplate()));
        RedisExtension.fields(testClass, StringRedisTemplate.class, isStatic)
                .forEach(field -> set(field, instance, clients.redisTemplate()));
    }

    private static Optional<RedisClients> clientsFor(ExtensionContext context) {
        return RedisExtension.running(context, RedisServerProcess.class).map(RedisClients::new)
                .or(() -> RedisExtension.running(context, RedisClusterProcesses.class).map(RedisClients::new))
                .or(() -> RedisExtension.running(context, RedisSentinelProcesses.class).map(RedisClients::new));
    }

    private static void set(java.lang.reflect.Field field, Object instance, Object value) {
        try {
            field.setAccessible(true);
            field.set(instance, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot set " + field, e);
        }
    }
}
