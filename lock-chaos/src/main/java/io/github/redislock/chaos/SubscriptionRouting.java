package io.github.redislock.chaos;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Set;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConnection;

/**
 * A connection factory for a worker whose pub/sub connection must take another path to Redis than its commands:
 * each connection it hands out sends {@code SUBSCRIBE} (and everything about that subscription) over a connection of
 * the subscription factory, and every other command over one of the command factory. The engine's wake-up
 * subscription is then delayed by the proxy in front of the subscription factory, its scripts are not.
 */
final class SubscriptionRouting {

    /** The {@link RedisConnection} methods that belong to a subscription. */
    private static final Set<String> SUBSCRIPTION_METHODS = Set.of("subscribe", "pSubscribe", "sSubscribe",
            "getSubscription", "isSubscribed");

    private SubscriptionRouting() {
    }

    static RedisConnectionFactory factory(RedisConnectionFactory commands, RedisConnectionFactory subscriptions) {
        return new RedisConnectionFactory() {
            @Override
            public RedisConnection getConnection() {
                return connection(commands, subscriptions);
            }

            @Override
            public RedisClusterConnection getClusterConnection() {
                throw new UnsupportedOperationException("standalone only");
            }

            @Override
            public boolean getConvertPipelineAndTxResults() {
                return commands.getConvertPipelineAndTxResults();
            }

            @Override
            public RedisSentinelConnection getSentinelConnection() {
                throw new UnsupportedOperationException("standalone only");
            }

            @Override
            public DataAccessException translateExceptionIfPossible(RuntimeException ex) {
                return commands.translateExceptionIfPossible(ex);
            }
        };
    }

    private static RedisConnection connection(RedisConnectionFactory commands, RedisConnectionFactory subscriptions) {
        InvocationHandler handler = new InvocationHandler() {
            private RedisConnection command;
            private RedisConnection subscription;

            @Override
            public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
                String name = method.getName();
                if (name.equals("close")) {
                    RedisConnection[] both;
                    synchronized (this) {
                        both = new RedisConnection[] {command, subscription};
                    }
                    for (RedisConnection connection : both) {
                        if (connection != null) {
                            connection.close();
                        }
                    }
                    return null;
                }
                if (method.getDeclaringClass() == Object.class) {
                    return switch (name) {
                        case "equals" -> proxy == args[0];
                        case "hashCode" -> System.identityHashCode(proxy);
                        default -> "routed connection";
                    };
                }
                // not held during the call: a subscription blocks its thread for as long as it lasts
                RedisConnection target;
                synchronized (this) {
                    if (SUBSCRIPTION_METHODS.contains(name)) {
                        if (subscription == null) {
                            subscription = subscriptions.getConnection();
                        }
                        target = subscription;
                    } else {
                        if (command == null) {
                            command = commands.getConnection();
                        }
                        target = command;
                    }
                }
                try {
                    return method.invoke(target, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }
        };
        return (RedisConnection) Proxy.newProxyInstance(SubscriptionRouting.class.getClassLoader(),
                new Class<?>[] {RedisConnection.class}, handler);
    }
}
