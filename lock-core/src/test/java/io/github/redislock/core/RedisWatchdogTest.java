package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
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

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;

    @PerTest
    String key;

    private String lockKey(String name) {
        return "redis-lock:{" + name + "}";
    }

    @Test
    void aRenewalWithALeaseShorterThanTheKeysTtlDoesNotShortenItButExtendsAShorterOne() {
        redis.opsForValue().set(lockKey(key), "owner-1", Duration.ofSeconds(60));

        Long reply = redis.execute(LockScripts.RENEW, List.of(lockKey(key)), "owner-1", "30000");

        assertThat(reply).isEqualTo(1);
        assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).isGreaterThan(50_000);

        redis.expire(lockKey(key), Duration.ofSeconds(10));
        assertThat(redis.execute(LockScripts.RENEW, List.of(lockKey(key)), "owner-1", "30000")).isEqualTo(1);
        assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).isGreaterThan(20_000);
    }

    /** Also as it runs before Redis 7.0 (no PEXPIRE GT: PTTL first), which only that script line tells apart. */
    @ParameterizedTest(name = "before Redis 7.0: {0}")
    @ValueSource(booleans = {false, true})
    void aBatchedRenewalExtendsEveryLockStillHeldWithoutShorteningOneAndReportsEachOneGone(boolean beforeRedis7) {
        String detect = "local gt = redis.REDIS_VERSION_NUM ~= nil";
        assertThat(LockScripts.RENEW_MANY.getScriptAsString()).contains(detect);
        RedisScript<String> renewMany = beforeRedis7
                ? RedisScript.of(LockScripts.RENEW_MANY.getScriptAsString().replace(detect, "local gt = false"), String.class)
                : LockScripts.RENEW_MANY;
        redis.opsForValue().set(lockKey(key + ":long"), "owner-1", Duration.ofSeconds(60));
        redis.opsForValue().set(lockKey(key + ":short"), "owner-2", Duration.ofSeconds(10));
        redis.opsForValue().set(lockKey(key + ":taken"), "someone-else", Duration.ofSeconds(10));

        String reply = redis.execute(renewMany, List.of(lockKey(key + ":long"), lockKey(key + ":short"),
                lockKey(key + ":taken"), lockKey(key + ":gone")), "owner-1", "30000", "owner-2", "30000", "owner-3",
                "30000", "owner-4", "30000");

        assertThat(reply).as("per lock: held, held, another owner's, gone").isEqualTo("1100");
        assertThat(redis.getExpire(lockKey(key + ":long"), TimeUnit.MILLISECONDS)).isGreaterThan(50_000);
        assertThat(redis.getExpire(lockKey(key + ":short"), TimeUnit.MILLISECONDS)).isGreaterThan(20_000);
        assertThat(redis.getExpire(lockKey(key + ":taken"), TimeUnit.MILLISECONDS)).as("not ours: untouched")
                .isLessThanOrEqualTo(10_000);
        assertThat(redis.hasKey(lockKey(key + ":gone"))).isFalse();
    }

    @Test
    void aWatchdogRenewalRacingAHandOverToALongerLeaseLeavesTheLongerLease() throws Exception {
        RedisLockTemplate template = clients.lockTemplate(); // watchdog lease 30s
        LockHandle held = template.acquire(key, LockOptions.tryOnce());
        CountDownLatch adopted = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
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
            assertThat(adoptedHolding.owner()).contains(":handover:");
            assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).isGreaterThan(50_000);

            // the watchdog read the hand-over holding (same owner, 30s, renewed) just before the adoption:
            // its RENEW lands after the adoption's 60s one
            LocalLock.Holding seenByWatchdog = new LocalLock.Holding(adoptedHolding.owner(), adoptedHolding.token(),
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
