package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Redlock on the shared engine: a release and a renewal of one holder are serialized, and {@code holdAtLeast} is
 * kept. Renewals and releases with a frozen master are {@link RedlockFrozenNodeTest}'s.
 */
@WithRedisNodes(value = 5, freshForEachTest = true)
class RedlockEngineTest {

    private static final String KEY = "engine:42";
    private static final String LOCK_KEY = "redis-lock:{engine:42}";

    RedisNodes nodes;
    RedlockClients clients;

    @BeforeEach
    void connect() {
        clients = new RedlockClients(nodes);
    }

    @AfterEach
    void close() {
        nodes.node(4).resume();
        clients.close();
    }

    @Test
    void aRenewalStillOnItsWayAtTheReleaseDoesNotPutTheReleasedLockBack() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        CountDownLatch renewing = new CountDownLatch(5);
        CountDownLatch renewed = new CountDownLatch(5);
        RedlockTemplate holder = clients.template(RedisLockConfig.defaults().withWatchdogLease(lease),
                client -> new SlowRenewals(client, 150, renewing, renewed));
        RedlockTemplate next = clients.template(RedisLockConfig.defaults().withWatchdogLease(lease));
        LockHandle handle = holder.acquire(KEY, LockOptions.tryOnce());
        assertThat(renewing.await(5, TimeUnit.SECONDS)).as("a renewal on its way to every node").isTrue();
        handle.release();
        assertThat(renewed.await(5, TimeUnit.SECONDS)).as("the renewal answered after the release").isTrue();
        Thread.sleep(100); // and whatever it did next on the nodes

        // a renewal that put the lock back would leave it on the nodes for a whole lease (3 s); a wait timed here
        // would also count the next client's first connections to five nodes
        assertThat(nodes.nodes()).as("nodes holding the released lock")
                .noneMatch(node -> "1".equals(node.command("EXISTS", LOCK_KEY)));
        assertThat(next.tryAcquire(KEY, LockOptions.tryOnce())).as("the next client at once").isPresent().get()
                .satisfies(LockHandle::release);
    }

    @Test
    void aReleaseBeforeHoldAtLeastLeavesTheLockOnTheNodesUntilThen() {
        RedlockTemplate template = clients.template();
        RedlockTemplate other = clients.template();
        template.acquire(KEY, LockOptions.tryOnce().withHoldAtLeast(Duration.ofSeconds(2))).release();
        int kept = 0;
        for (RedisServerProcess node : nodes.nodes()) {
            long ttl = Long.parseLong(node.command("PTTL", LOCK_KEY));
            kept += ttl > 0 && ttl <= 2000 ? 1 : 0;
        }
        assertThat(kept).as("nodes keeping the lock for the rest of its minimum hold").isGreaterThanOrEqualTo(3);
        assertThat(other.tryAcquire(KEY, LockOptions.tryOnce())).as("another client right after the release").isEmpty();
    }

    /** Real Redis; every renewal waits {@code delayMillis} before it is sent, as if held back on its way. */
    static final class SlowRenewals extends StringRedisTemplate {

        private final StringRedisTemplate delegate;
        private final long delayMillis;
        private final CountDownLatch renewing;
        private final CountDownLatch renewed;

        SlowRenewals(StringRedisTemplate delegate, long delayMillis, CountDownLatch renewing, CountDownLatch renewed) {
            super(delegate.getRequiredConnectionFactory());
            this.delegate = delegate;
            this.delayMillis = delayMillis;
            this.renewing = renewing;
            this.renewed = renewed;
        }

        @Override
        public <T> T execute(RedisScript<T> script, List<String> keys, Object... args) {
            boolean renewal = script == LockScripts.RENEW || script == LockScripts.RENEW_MANY;
            if (renewal && renewing.getCount() > 0) {
                renewing.countDown();
                try {
                    Thread.sleep(delayMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                try {
                    return delegate.execute(script, keys, args);
                } finally {
                    renewed.countDown();
                }
            }
            return delegate.execute(script, keys, args);
        }
    }
}
