package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Jedis clients on every node of a {@link RedisNodes}, and Redlock templates over them, closed together. */
final class RedlockClients implements AutoCloseable {

    private final RedisNodes nodes;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    RedlockClients(RedisNodes nodes) {
        this.nodes = nodes;
    }

    /** A client on each node (short timeouts, as a Redlock deployment would set), by {@code host:port}. */
    Map<String, StringRedisTemplate> clients() {
        Map<String, StringRedisTemplate> clients = new LinkedHashMap<>();
        for (RedisServerProcess node : nodes.nodes()) {
            clients.put(node.host() + ":" + node.port(), client(node));
        }
        return clients;
    }

    StringRedisTemplate client(RedisServerProcess node) {
        RedisClients nodeClients = new RedisClients(node);
        closeables.add(nodeClients);
        return nodeClients.redisTemplate();
    }

    RedlockTemplate template() {
        return template(RedisLockConfig.defaults());
    }

    RedlockTemplate template(RedisLockConfig config) {
        return template(config, UnaryOperator.identity());
    }

    /** A template whose node clients {@code wrap} may replace (to add latency, say). */
    RedlockTemplate template(RedisLockConfig config, UnaryOperator<StringRedisTemplate> wrap) {
        Map<String, StringRedisTemplate> clients = new LinkedHashMap<>();
        clients().forEach((name, client) -> clients.put(name, wrap.apply(client)));
        RedlockTemplate template = new RedlockTemplate(clients, config, Duration.ofSeconds(1));
        closeables.add(0, template);
        return template;
    }

    @Override
    public void close() {
        RedisClients.closeAll(closeables);
    }
}
