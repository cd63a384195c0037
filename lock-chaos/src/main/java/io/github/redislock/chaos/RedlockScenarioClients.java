package io.github.redislock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedlockTemplate;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The clients of the Redlock scenarios with many held locks ({@link RedlockFrozenNode}, {@link RedlockSnapshotRestart}):
 * a template over masters on loopback ports (Jedis, or Lettuce as Spring Boot sets it up), and which held locks a master
 * no longer has.
 */
final class RedlockScenarioClients {

    private RedlockScenarioClients() {
    }

    /**
     * A Redlock template over the masters on {@code ports} (Jedis, pooled, connect and read timeouts of
     * {@code nodeTimeout}); its connection factories go to {@code factories}, for the caller to destroy.
     */
    static RedlockTemplate template(List<Integer> ports, RedisLockConfig config, Duration nodeTimeout,
            List<DisposableBean> factories) {
        return template(ports, config, nodeTimeout, false, factories);
    }

    /**
     * Like {@link #template(List, RedisLockConfig, Duration, List)}; with {@code lettuce}, on Lettuce as Spring Boot sets
     * it up (one shared native connection per master, no pool; command timeout {@code nodeTimeout}).
     */
    static RedlockTemplate template(List<Integer> ports, RedisLockConfig config, Duration nodeTimeout, boolean lettuce,
            List<DisposableBean> factories) {
        Map<String, StringRedisTemplate> clients = new LinkedHashMap<>();
        for (int port : ports) {
            RedisStandaloneConfiguration node = new RedisStandaloneConfiguration("127.0.0.1", port);
            RedisConnectionFactory factory = lettuce
                    ? started(new LettuceConnectionFactory(node,
                            LettuceClientConfiguration.builder().commandTimeout(nodeTimeout).build()), factories)
                    : started(new JedisConnectionFactory(node, JedisClientConfiguration.builder()
                            .connectTimeout(nodeTimeout).readTimeout(nodeTimeout).usePooling().build()), factories);
            clients.put("127.0.0.1:" + port, new StringRedisTemplate(factory));
        }
        return new RedlockTemplate(clients, config, nodeTimeout);
    }

    /** Starts {@code factory} and adds it to {@code factories}, for the caller to destroy. */
    private static <F extends RedisConnectionFactory & InitializingBean & SmartLifecycle & DisposableBean> F started(F factory,
            List<DisposableBean> factories) {
        try {
            factory.afterPropertiesSet();
        } catch (Exception e) { // neither factory throws a checked exception here
            throw new IllegalStateException(e);
        }
        factory.start();
        factories.add(factory);
        return factory;
    }

    /** Destroys the connection factories {@link #template} made. */
    static void destroy(List<DisposableBean> factories) {
        for (DisposableBean factory : factories) {
            try {
                factory.destroy();
            } catch (Exception e) {
                System.err.println("Could not close a connection factory: " + e);
            }
        }
    }

    /** The Redis keys of the locks on {@code keys} that {@code node} does not hold for {@code clientId}. */
    static Set<String> missing(RedisServerProcess node, Collection<String> keys, String clientId) {
        List<String> redisKeys = keys.stream().map(ManyLocksFrozenNode::lockKey).toList();
        Set<String> missing = new HashSet<>();
        for (int from = 0; from < redisKeys.size(); from += 1000) {
            List<String> batch = redisKeys.subList(from, Math.min(redisKeys.size(), from + 1000));
            List<String> command = new ArrayList<>(batch.size() + 1);
            command.add("MGET");
            command.addAll(batch);
            String[] values = node.command(command.toArray(String[]::new)).split("\n", -1);
            for (int i = 0; i < batch.size(); i++) {
                if (i >= values.length || !values[i].startsWith(clientId)) {
                    missing.add(batch.get(i));
                }
            }
        }
        return missing;
    }
}
