package io.github.redislock.core;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * A connection factory that gives a lock client's release subscription its connection from another factory than its
 * commands (one that goes through a {@link HoldBackProxy}, say): the subscription connects on its own threads,
 * {@code redis-lock-subscribe-*} and {@code redis-lock-wakeup-*}.
 */
final class SubscriptionRouting {

    private SubscriptionRouting() {
    }

    static RedisConnectionFactory route(RedisConnectionFactory commands, RedisConnectionFactory subscription) {
        return (RedisConnectionFactory) Proxy.newProxyInstance(SubscriptionRouting.class.getClassLoader(),
                new Class<?>[] {RedisConnectionFactory.class}, (proxy, method, args) -> {
                    String thread = Thread.currentThread().getName();
                    boolean subscribing = thread.startsWith("redis-lock-subscribe-") || thread.startsWith("redis-lock-wakeup-");
                    try {
                        return method.invoke(subscribing ? subscription : commands, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
