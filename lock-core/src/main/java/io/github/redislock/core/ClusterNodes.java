package io.github.redislock.core;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Which Redis Cluster master serves each hash slot, as the driver last saw the topology ({@code clusterGetNodes()} of
 * Spring Data Redis's cluster connection, for Jedis and Lettuce alike), so the watchdog can renew each master's locks
 * apart from the others'. Looked up on a thread of its own, never on the caller's: a frozen node may hold up a look-up
 * for as long as the driver's timeout, and meanwhile the last known topology serves. Looked up again every
 * {@value #REFRESH_SECONDS} s while asked, and sooner when a renewal met a redirection (a failover, a resharding).
 * The answer only decides which master's queue a renewal waits in: the call itself goes through the driver, which
 * follows a redirection on its own, so a stale topology costs isolation for a while, never a renewal.
 */
final class ClusterNodes {

    private static final Logger log = LoggerFactory.getLogger(ClusterNodes.class);
    private static final long REFRESH_SECONDS = 5;

    private final StringRedisTemplate redis;
    private final ThreadPoolExecutor lookUps = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), runnable -> {
                Thread thread = new Thread(runnable, "redis-lock-cluster-topology");
                thread.setDaemon(true);
                return thread;
            });
    private final AtomicBoolean lookingUp = new AtomicBoolean();
    /** {@code host:port} of the master of each slot, {@code null} for a slot no master serves; null until looked up. */
    private volatile String[] masterOfSlot;
    private volatile long lookedUpAtNanos;
    private volatile boolean lookedUp;
    /** Whether a look-up found no Cluster (one Redis, Sentinel): then no slot has a master of its own to tell. */
    private volatile boolean notCluster;

    ClusterNodes(StringRedisTemplate redis) {
        this.redis = redis;
        this.lookUps.allowCoreThreadTimeOut(true);
    }

    /**
     * The master serving {@code slot} ({@code host:port}) as last looked up, or {@code null} when not known yet; starts
     * a look-up in the background when the last one is old.
     */
    String masterOf(int slot) {
        if (notCluster) {
            return null;
        }
        String[] known = masterOfSlot;
        if (!lookedUp || System.nanoTime() - lookedUpAtNanos > TimeUnit.SECONDS.toNanos(REFRESH_SECONDS)) {
            lookUpSoon();
        }
        return known == null ? null : known[slot];
    }

    /** Looks the topology up again in the background (a renewal met a redirection, or it is old), unless under way. */
    void lookUpSoon() {
        if (notCluster || !lookingUp.compareAndSet(false, true)) {
            return;
        }
        try {
            lookUps.execute(this::lookUp);
        } catch (RejectedExecutionException e) {
            lookingUp.set(false);
        }
    }

    private void lookUp() {
        try (RedisConnection connection = redis.getRequiredConnectionFactory().getConnection()) {
            if (!(connection instanceof RedisClusterConnection cluster)) {
                notCluster = true;
                return;
            }
            String[] found = new String[ClusterSlotHashUtil.SLOT_COUNT];
            for (RedisClusterNode node : cluster.clusterGetNodes()) {
                if (!node.isMaster() || node.getSlotRange() == null) {
                    continue;
                }
                String name = node.getHost() + ":" + node.getPort();
                for (int slot : node.getSlotRange().getSlotsArray()) {
                    found[slot] = name;
                }
            }
            masterOfSlot = found;
        } catch (RuntimeException e) {
            log.debug("Could not look up the Redis Cluster topology; the last one known still serves", e);
        } finally {
            lookedUpAtNanos = System.nanoTime(); // also after a failure: not again before the next period
            lookedUp = true;
            lookingUp.set(false);
        }
    }
}
