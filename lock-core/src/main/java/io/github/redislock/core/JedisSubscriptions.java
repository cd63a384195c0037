package io.github.redislock.core;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicBoolean;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import redis.clients.jedis.Jedis;

/**
 * Keeps a pooled Jedis connection whose subscription failed out of the pool. When Redis refuses a SUBSCRIBE (a user
 * without the channel permission, say), Spring Data Redis closes the subscription by sending UNSUBSCRIBE without
 * reading its reply, and hands the connection back to the pool: the next command borrowed with it reads that stale
 * reply, and every later one the reply of the command before (a lock script's reply crossing into another call). With
 * Jedis 7's pooled {@code RedisClient} the subscription borrows a connection of its own and has given it back before
 * the failure reaches Spring Data Redis, which then sends its UNSUBSCRIBE on a connection that another caller may hold.
 * So after a failed subscribe, a connection that holds a {@code Jedis} of its own marks it broken (the pool closes
 * it), and one on a pooled client is not closed (it has nothing to give back). Only loaded when Jedis is on the class
 * path.
 */
final class JedisSubscriptions {

    private JedisSubscriptions() {
    }

    /** {@code factory} itself unless it is a Jedis one; then one whose connections are dropped after a failed subscribe. */
    static RedisConnectionFactory discardingFailed(RedisConnectionFactory factory) {
        if (!(factory instanceof JedisConnectionFactory)) {
            return factory;
        }
        return (RedisConnectionFactory) Proxy.newProxyInstance(JedisSubscriptions.class.getClassLoader(),
                new Class<?>[] {RedisConnectionFactory.class}, (proxy, method, args) -> {
                    Object result = invoke(factory, method, args);
                    return result instanceof RedisConnection connection && method.getName().equals("getConnection")
                            ? discardingFailed(connection) : result;
                });
    }

    private static RedisConnection discardingFailed(RedisConnection connection) {
        AtomicBoolean subscribeFailed = new AtomicBoolean();
        return (RedisConnection) Proxy.newProxyInstance(JedisSubscriptions.class.getClassLoader(),
                new Class<?>[] {RedisConnection.class}, (proxy, method, args) -> {
                    String name = method.getName();
                    if (name.equals("close") && subscribeFailed.get() && !(connection.getNativeConnection() instanceof Jedis)) {
                        // a pooled client (RedisClient) lent the subscription a connection and took it back already:
                        // closing would send UNSUBSCRIBE on it while another caller may be using it. This connection
                        // itself holds no pooled connection to give back.
                        return null;
                    }
                    try {
                        return invoke(connection, method, args);
                    } catch (RuntimeException | Error e) {
                        if (name.equals("subscribe") || name.equals("pSubscribe")) {
                            subscribeFailed.set(true);
                            if (connection.getNativeConnection() instanceof Jedis jedis) {
                                jedis.getConnection().setBroken(); // its own connection: the pool closes it
                            }
                        }
                        throw e;
                    }
                });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
