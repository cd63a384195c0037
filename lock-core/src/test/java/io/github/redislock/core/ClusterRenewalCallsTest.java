package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * In Redis Cluster the watchdog renews a master's locks with one call per batch, whatever their hash slots (Redis 7.0+:
 * the batched script flagged {@code allow-cross-slot-keys}): 1,500 locks spread over every slot of three masters cost a
 * handful of renewal calls a renewal period, not one per slot (about 450 a master); on Redis 6.2 (lock-core's
 * {@code redis-6.2} execution), which refuses script flags, one call per slot, and still none lost. Runs in the test JVM that has the
 * machine to itself (lock-core's at-scale execution): its 1,500 leases of 3 s must not wait behind another JVM's tests.
 */
@WithRedisCluster(freshForEachTest = true)
class ClusterRenewalCallsTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final int LOCKS = 1500;

    RedisClusterProcesses cluster;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void aMastersLocksAreRenewedInOneCallPerBatchWhateverTheirSlots(String driver) throws Exception {
        try (RedisClients clients = new RedisClients(cluster)) {
            StringRedisTemplate redis = driver.equals("jedis") ? clients.redisTemplate() : clients.lettuceRedisTemplate();
            RedisLockTemplate template = clients.lockTemplate(new RedisLockTemplate(redis,
                    RedisLockConfig.defaults().withWatchdogLease(LEASE)));
            List<String> lost = new CopyOnWriteArrayList<>();
            template.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
            List<LockHandle> held = new ArrayList<>();
            // how long this JVM went without running a thread that asked every 10 ms: a lease lost after a stall
            // longer than two thirds of the lease is the machine's doing, and the failure says so
            AtomicLong longestStallMillis = new AtomicLong();
            Thread stallWatch = new Thread(() -> {
                long last = System.nanoTime();
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                    long now = System.nanoTime();
                    longestStallMillis.accumulateAndGet((now - last) / 1_000_000 - 10, Math::max);
                    last = now;
                }
            }, "stall-watch");
            stallWatch.setDaemon(true);
            stallWatch.start();
            long started = System.nanoTime();
            for (int i = 0; i < LOCKS; i++) {
                held.add(template.acquire("account:" + i, LockOptions.tryOnce()));
            }
            long acquiringMillis = (System.nanoTime() - started) / 1_000_000;
            // the watchdog learns the masters of the slots off the renewal path: let a first round of renewals pass
            Thread.sleep(LEASE.toMillis() / 2);
            cluster.masters().forEach(master -> master.command("CONFIG", "RESETSTAT"));
            Thread.sleep(LEASE.toMillis()); // three renewal periods
            stallWatch.interrupt();
            assertThat(lost).as("locks lost (acquiring the %d took %d ms; the longest stall of this JVM was %d ms)",
                    LOCKS, acquiringMillis, longestStallMillis.get()).isEmpty();

            System.out.println(driver + " renewal calls per master: " + cluster.masters().stream()
                    .map(master -> master.port() + "=" + ScriptCalls.ran(master)).toList());
            for (RedisServerProcess master : cluster.masters()) {
                long calls = ScriptCalls.ran(master);
                if (master.majorVersion() < 7) {
                    // Redis 6.2 refuses script flags: one call per hash slot, as documented, about 450 a period
                    assertThat(calls).as("renewal calls on Redis %d master %d in three renewal periods, one per slot",
                            master.majorVersion(), master.port()).isGreaterThan(900L);
                    continue;
                }
                // per slot it would be about 450 calls a period, 1,350 in three; per batch (up to 100 locks, and a
                // batch for each moment its locks fall due, so more on a loaded machine: 24 to 32 were seen in CI) a
                // few dozen at most
                assertThat(calls).as("renewal calls on master %d in three renewal periods", master.port())
                        .isBetween(1L, 150L);
            }
            assertThat(held).allMatch(LockHandle::isHeld);
            for (LockHandle handle : held) {
                handle.release();
            }
        }
    }
}
