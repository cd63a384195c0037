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
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The clients of the Redlock scenarios with many held locks ({@link RedlockFrozenNode}, {@link RedlockSnapshotRestart}):
 * a template over masters on loopback ports, and which held locks a master no longer has.
 */
final class RedlockScenarioClients {

    private RedlockScenarioClients() {
    }

    /**
     * A Redlock template over the masters on {@code ports} (Jedis, pooled, connect and read timeouts of
     * {@code nodeTimeout}); its connection factories go to {@code factories}, for the caller to destroy.
     */
    static RedlockTemplate template(List<Integer> ports, RedisLockConfig config, Duration nodeTimeout,
            List<JedisConnectionFactory> factories) {
        Map<String, StringRedisTemplate> clients = new LinkedHashMap<>();
        for (int port : ports) {
            JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
                    JedisClientConfiguration.builder().connectTimeout(nodeTimeout).readTimeout(nodeTimeout).usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            factories.add(factory);
            clients.put("127.0.0.1:" + port, new StringRedisTemplate(factory));
        }
        return new RedlockTemplate(clients, config, nodeTimeout);
    }

    /** The Redis keys of the locks on {@code keys} that {@code node} does not hold for {@code clientId}. */
    static Set<String> missing(RedisServerProcess node, Collection<String> keys, String clientId) {
        List<String> redisKeys = keys.stream().map(key -> "redis-lock:{" + key + "}").toList();
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
