package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/** The watchdog against a real redis-server: renewals never shorten a lease, and nothing slow holds them up. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class RedisWatchdogTest {

    private static final RedisLockKeys KEYS = new RedisLockKeys(RedisLockConfig.DEFAULT_KEY_PREFIX);

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;

    @PerTest
    String key;

    private String lockKey(String name) {
        return "redis-lock:{" + name + "}";
    }

    /**
     * Every renewal script, also as it runs before Redis 7.0 (no PEXPIRE GT: PTTL first), which only its line setting
     * {@code gt} tells apart.
     */
    private static <T> RedisScript<T> asRun(RedisScript<T> script, boolean beforeRedis7) {
        String detect = "local gt = redis.REDIS_VERSION_NUM ~= nil";
        assertThat(script.getScriptAsString()).contains(detect);
        return beforeRedis7 ? RedisScript.of(script.getScriptAsString().replace(detect, "local gt = false"),
                script.getResultType()) : script;
    }

    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aRenewalWithALeaseShorterThanTheKeysTtlDoesNotShortenItButExtendsAShorterOne(boolean beforeRedis7) {
        RedisScript<Long> renew = asRun(LockScripts.RENEW, beforeRedis7);
        redis.opsForValue().set(lockKey(key), "owner-1", Duration.ofSeconds(60));

        Long reply = redis.execute(renew, List.of(lockKey(key)), "owner-1", "30000");

        assertThat(reply).isEqualTo(1);
        assertThat(ttl(lockKey(key))).isGreaterThan(50_000);

        redis.expire(lockKey(key), Duration.ofSeconds(10));
        assertThat(redis.execute(renew, List.of(lockKey(key)), "owner-1", "30000")).isEqualTo(1);
        assertThat(ttl(lockKey(key))).isGreaterThan(20_000);

        assertThat(redis.execute(renew, List.of(lockKey(key)), "owner-1", "5000", "exact")).as("the holder's own lease")
                .isEqualTo(1);
        assertThat(ttl(lockKey(key))).as("set exactly, also when shorter").isLessThanOrEqualTo(5_000);

        assertThat(redis.execute(renew, List.of(lockKey(key)), "owner-2", "30000")).as("another owner's").isZero();
        assertThat(ttl(lockKey(key))).as("not ours: untouched").isLessThanOrEqualTo(5_000);
    }

    /**
     * An exact lease for a new owner id (a thread taking a handed-over lock with a fixed lease, a release's minimum
     * hold): a renewal of the old owner id reaching Redis afterwards finds the lock gone and cannot stretch it.
     */
    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void anExactLeaseForANewOwnerIdCannotBeStretchedByALateRenewalOfTheOldOne(boolean beforeRedis7) {
        RedisScript<Long> renew = asRun(LockScripts.RENEW, beforeRedis7);
        RedisScript<String> renewMany = asRun(LockScripts.RENEW_MANY, beforeRedis7);
        redis.opsForValue().set(lockKey(key), "owner-1", Duration.ofSeconds(30));

        assertThat(redis.execute(renew, List.of(lockKey(key)), "owner-1", "5000", "exact", "owner-2")).isEqualTo(1);
        assertThat(redis.opsForValue().get(lockKey(key))).isEqualTo("owner-2");
        assertThat(ttl(lockKey(key))).isBetween(1L, 5_000L);

        assertThat(redis.execute(renew, List.of(lockKey(key)), "owner-1", "30000")).as("a late renewal").isZero();
        assertThat(redis.execute(renewMany, List.of(lockKey(key)), "owner-1", "30000")).as("a late batched renewal")
                .isEqualTo("0");
        assertThat(ttl(lockKey(key))).as("the exact lease, not stretched").isBetween(1L, 5_000L);
        assertThat(redis.execute(renew, List.of(lockKey(key)), "owner-1", "1000", "exact", "owner-3"))
                .as("nor set again by the old owner id").isZero();
        assertThat(redis.opsForValue().get(lockKey(key))).isEqualTo("owner-2");
    }

    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aBatchedRenewalExtendsEveryLockStillHeldWithoutShorteningOneAndReportsEachOneGone(boolean beforeRedis7) {
        RedisScript<String> renewMany = asRun(LockScripts.RENEW_MANY, beforeRedis7);
        redis.opsForValue().set(lockKey(key + ":long"), "owner-1", Duration.ofSeconds(60));
        redis.opsForValue().set(lockKey(key + ":short"), "owner-2", Duration.ofSeconds(10));
        redis.opsForValue().set(lockKey(key + ":taken"), "someone-else", Duration.ofSeconds(10));

        String reply = redis.execute(renewMany, List.of(lockKey(key + ":long"), lockKey(key + ":short"),
                lockKey(key + ":taken"), lockKey(key + ":gone")), "owner-1", "owner-2", "owner-3", "owner-4", "30000");

        assertThat(reply).as("per lock: held, held, another owner's, gone").isEqualTo("1100");
        assertThat(ttl(lockKey(key + ":long"))).isGreaterThan(50_000);
        assertThat(ttl(lockKey(key + ":short"))).isGreaterThan(20_000);
        assertThat(ttl(lockKey(key + ":taken"))).as("not ours: untouched").isLessThanOrEqualTo(10_000);
        assertThat(redis.hasKey(lockKey(key + ":gone"))).isFalse();
    }

    /** The batched script takes one lease for all its holdings: holdings of several leases go out as a call per lease. */
    @Test
    void aBatchOfHoldingsWithDifferentLeasesRenewsEachToItsOwnLease() {
        RedisLockTemplate template = clients.lockTemplate();
        Renewer.Many many = template.watchdog().exclusiveRenewer().many();
        List<String> names = List.of(key + ":a", key + ":b", key + ":c", key + ":d");
        for (String name : names) {
            redis.opsForValue().set(lockKey(name), "owner-" + name, Duration.ofSeconds(5));
        }
        redis.opsForValue().set(lockKey(key + ":c"), "someone-else", Duration.ofSeconds(5));

        Renewer.Replies replies = many.renew(names, names.stream().map(name -> "owner-" + name).toList(),
                new long[] {30_000, 60_000, 30_000, 90_000});

        assertThat(replies.failure()).isNull();
        assertThat(replies.outcomes()).as("per lock, in the order asked").isEqualTo("1101");
        assertThat(ttl(lockKey(key + ":a"))).isBetween(20_000L, 30_000L);
        assertThat(ttl(lockKey(key + ":b"))).isBetween(50_000L, 60_000L);
        assertThat(ttl(lockKey(key + ":c"))).as("not ours: untouched").isLessThanOrEqualTo(5_000);
        assertThat(ttl(lockKey(key + ":d"))).isBetween(80_000L, 90_000L);
    }

    /** A write lock's renewal as {@code renew.lua}'s; a read share's extends its entry, the readers and the epoch. */
    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aReadWriteRenewalExtendsTheWriterOrTheReadersAndEpochWithoutShorteningThem(boolean beforeRedis7) {
        RedisScript<Long> renew = asRun(LockScripts.RW_RENEW, beforeRedis7);
        String name = key + (beforeRedis7 ? ":before-7" : ":7"); // key is the same in both runs
        List<String> keys = readWriteKeys(name);
        String writer = keys.get(0);
        String readers = keys.get(1);
        String epoch = keys.get(2);
        redis.opsForValue().set(writer, "writer-1", Duration.ofSeconds(60));
        assertThat(redis.execute(renew, keys, "writer-1", "write", "30000")).isEqualTo(1);
        assertThat(ttl(writer)).isGreaterThan(50_000);
        redis.expire(writer, Duration.ofSeconds(10));
        assertThat(redis.execute(renew, keys, "writer-1", "write", "30000")).isEqualTo(1);
        assertThat(ttl(writer)).isGreaterThan(20_000);
        assertThat(redis.execute(renew, keys, "writer-2", "write", "30000")).as("another writer's").isZero();

        read(keys, "reader-1", Duration.ofSeconds(60));
        assertThat(redis.execute(renew, keys, "reader-1", "read", "30000")).isEqualTo(1);
        assertThat(ttl(readers)).isGreaterThan(50_000);
        assertThat(ttl(epoch)).isGreaterThan(50_000);
        assertThat(leaseLeft(readers, "reader-1")).as("the entry's lease, left as it was").isGreaterThan(50_000);

        read(keys, "reader-1", Duration.ofSeconds(10));
        assertThat(redis.execute(renew, keys, "reader-1", "read", "30000")).isEqualTo(1);
        assertThat(ttl(readers)).isGreaterThan(20_000);
        assertThat(ttl(epoch)).isGreaterThan(20_000);
        assertThat(leaseLeft(readers, "reader-1")).isGreaterThan(20_000);

        redis.opsForZSet().add(keys.get(4), "writer-2", System.currentTimeMillis() + 60_000);
        assertThat(redis.execute(renew, keys, "reader-1", "read", "30000")).as("held, a writer waiting").isEqualTo(2);
        assertThat(redis.execute(renew, keys, "reader-2", "read", "30000")).as("no share").isZero();
    }

    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aBatchedReadShareRenewalExtendsEachShareStillHeldWithoutShorteningOne(boolean beforeRedis7) {
        RedisScript<String> renewMany = asRun(LockScripts.RW_READ_RENEW_MANY, beforeRedis7);
        String name = key + (beforeRedis7 ? ":before-7" : ":7"); // key is the same in both runs
        List<String> longShare = readWriteKeys(name + ":long");
        List<String> shortShare = readWriteKeys(name + ":short");
        List<String> goneShare = readWriteKeys(name + ":gone");
        List<String> blockedShare = readWriteKeys(name + ":blocked");
        read(longShare, "reader-1", Duration.ofSeconds(60));
        read(shortShare, "reader-2", Duration.ofSeconds(10));
        read(blockedShare, "reader-4", Duration.ofSeconds(10));
        redis.opsForZSet().add(blockedShare.get(4), "writer-1", System.currentTimeMillis() + 60_000);
        List<String> keys = new ArrayList<>();
        for (List<String> share : List.of(longShare, shortShare, goneShare, blockedShare)) {
            keys.addAll(List.of(share.get(1), share.get(2), share.get(4)));
        }

        String reply = redis.execute(renewMany, keys, "reader-1", "reader-2", "reader-3", "reader-4", "30000");

        assertThat(reply).as("per share: held, held, gone, held with a writer waiting").isEqualTo("1102");
        assertThat(ttl(longShare.get(1))).isGreaterThan(50_000);
        assertThat(ttl(longShare.get(2))).isGreaterThan(50_000);
        for (List<String> extended : List.of(shortShare, blockedShare)) {
            assertThat(ttl(extended.get(1))).as("readers of %s", extended.get(1)).isGreaterThan(20_000);
            assertThat(ttl(extended.get(2))).as("epoch of %s", extended.get(1)).isGreaterThan(20_000);
        }
        assertThat(redis.hasKey(goneShare.get(1))).isFalse();
    }

    /** The holders and permits live as long as the lease, the limit at least as long as it is kept unused. */
    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aSemaphoreRenewalExtendsTheHoldersPermitsAndLimitWithoutShorteningThem(boolean beforeRedis7) {
        RedisScript<Long> renew = asRun(SemaphoreScripts.RENEW, beforeRedis7);
        String name = key + (beforeRedis7 ? ":before-7" : ":7"); // key is the same in both runs
        List<String> keys = semaphoreKeys(name);
        hold(keys, "holder-1", Duration.ofSeconds(60), Duration.ofSeconds(120));
        assertThat(redis.execute(renew, keys, "holder-1", "30000", "90000")).isEqualTo(1);
        assertThat(ttl(keys.get(0))).isGreaterThan(50_000);
        assertThat(ttl(keys.get(1))).isGreaterThan(50_000);
        assertThat(ttl(keys.get(2))).isGreaterThan(110_000);
        assertThat(leaseLeft(keys.get(0), "holder-1")).isGreaterThan(50_000);

        hold(keys, "holder-1", Duration.ofSeconds(10), Duration.ofSeconds(10));
        assertThat(redis.execute(renew, keys, "holder-1", "30000", "90000")).isEqualTo(1);
        assertThat(ttl(keys.get(0))).isGreaterThan(20_000);
        assertThat(ttl(keys.get(1))).isGreaterThan(20_000);
        assertThat(ttl(keys.get(2))).as("kept unused 90 s").isGreaterThan(80_000);
        assertThat(leaseLeft(keys.get(0), "holder-1")).isGreaterThan(20_000);

        assertThat(redis.execute(renew, keys, "holder-2", "30000", "90000")).as("no permits").isZero();
    }

    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aBatchedSemaphoreRenewalExtendsEachHolderStillHoldingWithoutShorteningOne(boolean beforeRedis7) {
        RedisScript<String> renewMany = asRun(SemaphoreScripts.RENEW_MANY, beforeRedis7);
        String name = key + (beforeRedis7 ? ":before-7" : ":7"); // key is the same in both runs
        List<String> longHeld = semaphoreKeys(name + ":long");
        List<String> shortHeld = semaphoreKeys(name + ":short");
        List<String> gone = semaphoreKeys(name + ":gone");
        hold(longHeld, "holder-1", Duration.ofSeconds(60), Duration.ofSeconds(120));
        hold(shortHeld, "holder-2", Duration.ofSeconds(10), Duration.ofSeconds(10));
        List<String> keys = new ArrayList<>(longHeld);
        keys.addAll(shortHeld);
        keys.addAll(gone);

        String reply = redis.execute(renewMany, keys, "90000", "holder-1", "holder-2", "holder-3", "30000");

        assertThat(reply).as("per holder: held, held, gone").isEqualTo("110");
        assertThat(ttl(longHeld.get(0))).isGreaterThan(50_000);
        assertThat(ttl(longHeld.get(1))).isGreaterThan(50_000);
        assertThat(ttl(longHeld.get(2))).isGreaterThan(110_000);
        assertThat(ttl(shortHeld.get(0))).isGreaterThan(20_000);
        assertThat(ttl(shortHeld.get(1))).isGreaterThan(20_000);
        assertThat(ttl(shortHeld.get(2))).as("kept unused 90 s").isGreaterThan(80_000);
        assertThat(redis.hasKey(gone.get(0))).isFalse();
    }

    private long ttl(String redisKey) {
        return redis.getExpire(redisKey, TimeUnit.MILLISECONDS);
    }

    /** How long {@code member}'s entry in the zset {@code redisKey} has left, by its score (its lease end in ms). */
    private long leaseLeft(String redisKey, String member) {
        return redis.opsForZSet().score(redisKey, member).longValue() - System.currentTimeMillis();
    }

    /** The seven keys every read/write script takes: writer, readers, epoch, fencing counter, writers waiting, ... */
    private static List<String> readWriteKeys(String name) {
        return KEYS.readWrite(name);
    }

    /** {@code owner} reads for {@code lease}: its entry, the readers and the epoch all end then. */
    private void read(List<String> keys, String owner, Duration lease) {
        redis.opsForZSet().add(keys.get(1), owner, System.currentTimeMillis() + lease.toMillis());
        redis.expire(keys.get(1), lease);
        redis.opsForValue().set(keys.get(2), "7", lease);
    }

    /** A semaphore's holders, permits per holder and limit. */
    private static List<String> semaphoreKeys(String name) {
        return List.of(KEYS.semaphoreHolders(name), KEYS.semaphorePermits(name), KEYS.semaphoreLimit(name));
    }

    /** {@code holder} holds a permit for {@code lease}; the limit is kept for {@code limitKept}. */
    private void hold(List<String> keys, String holder, Duration lease, Duration limitKept) {
        redis.opsForZSet().add(keys.get(0), holder, System.currentTimeMillis() + lease.toMillis());
        redis.expire(keys.get(0), lease);
        redis.opsForHash().put(keys.get(1), holder, "1");
        redis.expire(keys.get(1), lease);
        redis.opsForValue().set(keys.get(2), "2", limitKept);
    }

    @Test
    void aWatchdogRenewalRacingAHandOverToALongerLeaseLeavesTheLongerLease() throws Exception {
        RedisLockTemplate template = clients.lockTemplate(); // watchdog lease 30s
        LockHandle held = template.acquire(key, LockOptions.tryOnce());
        CountDownLatch adopted = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            Future<Boolean> next = pool.submit(() -> {
                try (LockHandle taken = template.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10))
                        .withLease(Duration.ofSeconds(60)))) {
                    adopted.countDown();
                    done.await(10, TimeUnit.SECONDS);
                    return taken.isHeld();
                }
            });
            LocalQueue.awaitQueued(template, key, 1);
            held.release(); // hands the lock over with the watchdog's 30s lease
            assertThat(adopted.await(10, TimeUnit.SECONDS)).isTrue();
            LocalLock lock = template.localLock(key);
            LocalLock.Holding adoptedHolding = lock.holding;
            String handedOver = monitor.handedOverOwner(lockKey(key));
            assertThat(adoptedHolding.owner()).as("held under the thread's own owner id").isNotEqualTo(handedOver)
                    .doesNotContain(":handover:");
            assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).isGreaterThan(50_000);

            // the watchdog read the hand-over holding (30s, renewed) just before the adoption: its RENEW lands after
            // the adoption's 60s one
            LocalLock.Holding seenByWatchdog = new LocalLock.Holding(handedOver, adoptedHolding.token(),
                    TimeUnit.SECONDS.toNanos(30), true);
            long adoptionSent = lock.renewedAtNanos();
            template.watchdog().renew(lock, template.watchdog().exclusiveRenewer(), seenByWatchdog, System.nanoTime());

            assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).as("TTL in Redis").isGreaterThan(50_000);
            assertThat(lock.holding).isSameAs(adoptedHolding);
            assertThat(lock.renewedAtNanos()).as("the local lease still counts from the adoption's RENEW").isEqualTo(adoptionSent);
            assertThat(lock.isValid()).isTrue();
            done.countDown();
            assertThat(next.get(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            done.countDown();
            pool.shutdown();
        }
    }

    @Test
    void aLockLostListenerThatSleepsTwiceTheLeaseCostsNoOtherLock() throws Exception {
        Duration lease = Duration.ofMillis(900);
        RedisLockTemplate template = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(lease));
        CountDownLatch told = new CountDownLatch(1);
        template.addLockLostListener((lock, reason) -> {
            told.countDown();
            try {
                Thread.sleep(2 * lease.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        String doomedKey = key + ":doomed";
        String healthyKey = key + ":healthy";
        LockHandle doomed = template.acquire(doomedKey, LockOptions.tryOnce());
        LockHandle healthy = template.acquire(healthyKey, LockOptions.tryOnce());

        redis.delete(lockKey(doomedKey));
        assertThat(told.await(5, TimeUnit.SECONDS)).as("the listener was told of the deleted lock").isTrue();

        long end = System.nanoTime() + 3 * lease.toNanos();
        while (System.nanoTime() < end) {
            assertThat(healthy.isHeld()).as("the other lock, while the listener sleeps").isTrue();
            Thread.sleep(20);
        }
        assertThat(redis.opsForValue().get(lockKey(healthyKey))).as("Redis still has it as ours").startsWith(template.clientId());
        healthy.release();
        assertThat(doomed.isHeld()).isFalse();
        assertThatThrownBy(doomed::release).isInstanceOf(LockLostException.class);
    }
}
