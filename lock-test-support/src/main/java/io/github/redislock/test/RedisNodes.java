package io.github.redislock.test;

import java.util.ArrayList;
import java.util.List;

/**
 * Independent {@code redis-server} masters on free loopback ports, unaware of each other: the nodes of a Redlock.
 * Each keeps nothing on disk unless started with persistence arguments, so a killed and restarted node comes back empty.
 */
public final class RedisNodes implements AutoCloseable {

    private final List<RedisServerProcess> nodes;

    private RedisNodes(List<RedisServerProcess> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /** Starts {@code count} independent masters. */
    public static RedisNodes start(int count) {
        return start(count, List.of());
    }

    /** Starts {@code count} independent masters with these extra {@code redis-server} arguments (persistence, say). */
    public static RedisNodes start(int count, List<String> extraArgs) {
        if (count < 1) {
            throw new IllegalArgumentException("at least one node, was " + count);
        }
        List<RedisServerProcess> started = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                started.add(RedisServerProcess.start(extraArgs));
            }
            return new RedisNodes(started);
        } catch (RuntimeException e) {
            started.forEach(RedisServerProcess::close);
            throw e;
        }
    }

    public List<RedisServerProcess> nodes() {
        return nodes;
    }

    public RedisServerProcess node(int index) {
        return nodes.get(index);
    }

    public int size() {
        return nodes.size();
    }

    /** {@code redis://127.0.0.1:port} of every node, for {@code redis-lock.redlock.nodes}. */
    public List<String> uris() {
        return nodes.stream().map(n -> "redis://" + n.host() + ":" + n.port()).toList();
    }

    /** Starts every node that is not running (empty), so a test that killed some leaves the next one all nodes. */
    public void restartStopped() {
        nodes.stream().filter(n -> !n.isRunning()).forEach(RedisServerProcess::restart);
    }

    @Override
    public void close() {
        nodes.forEach(RedisServerProcess::close);
    }
}
