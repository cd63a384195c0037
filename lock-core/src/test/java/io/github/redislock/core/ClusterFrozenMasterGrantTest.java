package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.redislock.test.Await;
import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A frozen Cluster master holds up only the background work on its own slots: a client whose releases to the frozen
 * master failed (retried in the background until Redis answers or a lease has passed) still confirms, at once, the
 * grants it takes from their message on the healthy masters (the exclusive lock's grant to the longest-waiting client,
 * the fair lock's hand-over). Were the retries and the confirmations in one queue, the confirmations would wait behind
 * calls that each block for the driver's timeout, the grants' 500 ms would run out, and the holders on the healthy
 * masters would lose their locks because of a master they never touched.
 */
@WithRedisCluster(freshForEachTest = true)
class ClusterFrozenMasterGrantTest {

    /** Releases to the frozen master that fail and are retried in the background: more than the pool's threads. */
    private static final int STUCK_RELEASES = 8;
    private static final int ROUNDS = 3;

    RedisClusterProcesses cluster;

    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({"exclusive, jedis", "fair, jedis", "exclusive, lettuce", "fair, lettuce"})
    void aFrozenMastersRetriedReleasesDelayNoGrantOnTheHealthyMasters(String type, String driverName) throws Exception {
        cluster.masters().forEach(m -> m.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
        ExecutorService pool = Executors.newCachedThreadPool();
        try (RedisClients clients = new RedisClients(cluster)) {
            StringRedisTemplate redis = clients.redisTemplate();
            // Lettuce as Boot sets it up (one shared connection per client), with Jedis's 2 s timeout: each call to the
            // frozen master, the caller's and every background retry, blocks for it
            Supplier<StringRedisTemplate> driver = "lettuce".equals(driverName)
                    ? () -> clients.lettuceRedisTemplate(Duration.ofSeconds(2), true) : clients::redisTemplate;
            RedisLockTemplate holder = clients.lockTemplate(new RedisLockTemplate(driver.get(), RedisLockConfig.defaults()));
            RedisLockTemplate waiter = clients.lockTemplate(new RedisLockTemplate(driver.get(), RedisLockConfig.defaults()));
            Set<String> lost = ConcurrentHashMap.newKeySet();
            waiter.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
            Await.until(() -> holder.isListening() && waiter.isListening(), Duration.ofSeconds(10), "both to subscribe");

            RedisServerProcess frozen = cluster.masters().get(1);
            List<String> frozenKeys = keysOn(frozen, "stuck:", STUCK_RELEASES);
            List<String> healthyKeys = new ArrayList<>();
            for (int round = 1; round <= ROUNDS; round++) {
                healthyKeys.add(keysOn(cluster.masters().get(round % 2 == 0 ? 0 : 2), "healthy-" + round + ":", 1).get(0));
            }
            warmUp(holder, waiter, healthyKeys, frozenKeys);

            // each lock taken and released on a thread of its own (a handle is its thread's)
            CountDownLatch frozenNow = new CountDownLatch(1);
            List<CompletableFuture<Void>> taken = new ArrayList<>();
            List<Future<?>> releases = new ArrayList<>();
            for (String key : frozenKeys) {
                CompletableFuture<Void> held = new CompletableFuture<>();
                taken.add(held);
                releases.add(pool.submit(() -> {
                    LockHandle handle = waiter.acquire(key, LockOptions.tryOnce());
                    held.complete(null);
                    frozenNow.await();
                    try {
                        handle.release(); // blocks for the driver's 2 s timeout, then retried in the background
                    } catch (LockLostException | org.springframework.dao.DataAccessException expected) {
                    }
                    return null;
                }));
            }
            CompletableFuture.allOf(taken.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            frozen.pause();
            try {
                frozenNow.countDown();
                for (Future<?> release : releases) {
                    release.get(30, TimeUnit.SECONDS);
                }
                for (String key : healthyKeys) {
                    handOff(type.equals("fair"), holder, waiter, key, redis, pool, lost);
                }
            } finally {
                frozen.resume();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The holder releases {@code key} while the waiter's thread waits for it: the waiter holds it, and still holds it
     * well after the grant's 500 ms, its confirmation having reached the healthy master.
     */
    private static void handOff(boolean fair, RedisLockTemplate holder, RedisLockTemplate waiter, String key,
            StringRedisTemplate redis, ExecutorService pool, Set<String> lost) throws Exception {
        LockHandle gate = fair ? holder.fairLock(key).acquire(LockOptions.tryOnce())
                : holder.acquire(key, LockOptions.tryOnce());
        CompletableFuture<LockHandle> taken = new CompletableFuture<>();
        CountDownLatch mayRelease = new CountDownLatch(1);
        Future<?> w = pool.submit(() -> {
            LockOptions wait = LockOptions.waitFor(Duration.ofSeconds(10));
            try (LockHandle handle = fair ? waiter.fairLock(key).acquire(wait) : waiter.acquire(key, wait)) {
                taken.complete(handle);
                mayRelease.await();
            }
            return null;
        });
        String waiters = "redis-lock:{" + key + "}" + (fair ? ":queue" : ":waiters");
        Await.until(() -> redis.opsForZSet().size(waiters) == 1L, Duration.ofSeconds(10),
                "the waiter to wait for " + key);
        gate.release();
        LockHandle handle = taken.get(10, TimeUnit.SECONDS);
        String inRedis = redis.opsForValue().get("redis-lock:{" + key + "}");
        Thread.sleep(3 * LockScripts.GRANT_MILLIS);
        assertThat(lost).as("locks the waiter lost (the lock in Redis right after it took %s: %s)", key, inRedis).isEmpty();
        assertThat(handle.isHeld()).as("the waiter holds %s past the grant's life", key).isTrue();
        assertThat(redis.opsForValue().get("redis-lock:{" + key + "}")).as("the lock %s in Redis", key)
                .startsWith(waiter.clientId());
        mayRelease.countDown();
        w.get(10, TimeUnit.SECONDS);
    }

    /** Both clients have talked to every master (connections made, scripts loaded) before the freeze. */
    private static void warmUp(RedisLockTemplate holder, RedisLockTemplate waiter, List<String> healthyKeys,
            List<String> frozenKeys) {
        for (String key : healthyKeys) {
            holder.acquire(key, LockOptions.tryOnce()).release();
            waiter.acquire(key, LockOptions.tryOnce()).release();
        }
        waiter.acquire(frozenKeys.get(0), LockOptions.tryOnce()).release();
    }

    /** {@code count} lock keys starting {@code prefix} whose slots {@code master} serves. */
    private List<String> keysOn(RedisServerProcess master, String prefix, int count) {
        Map<Integer, RedisServerProcess> masterOfSlot = cluster.masterOfSlot();
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < count; i++) {
            String key = prefix + i;
            if (masterOfSlot.get(ClusterSlotHashUtil.calculateSlot("redis-lock:{" + key + "}")) == master) {
                keys.add(key);
            }
        }
        return keys;
    }
}
