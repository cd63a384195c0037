package io.github.redislock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Redlock settings under {@code redis-lock.redlock.*}: the independent Redis masters that
 * the {@code redlockTemplate} bean locks over ({@code @DistributedLock(locks = "redlockTemplate")}).
 */
@ConfigurationProperties("redis-lock.redlock")
public class RedlockProperties {

    /**
     * Independent Redis masters to lock over with Redlock, as redis://[user:password@]host:port[/db] (rediss:// for
     * TLS); an odd number, at least 3. Setting them adds the redlockTemplate bean.
     */
    private List<String> nodes = new ArrayList<>();

    /**
     * How long to wait for one Redlock node's reply (its client's connect and command timeout); a node slower than
     * this counts as failed for that attempt.
     */
    private Duration timeout = Duration.ofSeconds(1);

    /**
     * How long a Redlock node that restarted (with or without persistence) or was flushed grants no lock, so that
     * every lock it forgot has expired first: at least the longest lease any client takes on these nodes. Defaults to
     * redis-lock.lease-time; a redlock acquisition with a longer fixed lease is refused.
     */
    private @Nullable Duration restartDelay;

    public List<String> getNodes() {
        return nodes;
    }

    public void setNodes(List<String> nodes) {
        this.nodes = nodes;
    }

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    public @Nullable Duration getRestartDelay() {
        return restartDelay;
    }

    public void setRestartDelay(@Nullable Duration restartDelay) {
        this.restartDelay = restartDelay;
    }
}
