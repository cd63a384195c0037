package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Who a release wakes when clients wait for an exclusive lock: the turn it keeps for the longest-waiting clients
 * must not strand a live waiter behind clients that died, and a JVM keeps its place while any of its threads waits.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class WaiterTurnTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(10);

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;

    RedisLockTemplate holder;
    RedisLockTemplate live;

    @PerTest
    String key;

    @Test
    void aLiveWaiterBehindWaitersThatDiedGetsTheLockSoonAfterTheirTurnEnds() throws Exception {
        LockHandle held = holder.acquire(key, LockOptions.waitFor(LONG_WAIT));
        try {
            // two clients that registered as waiters, sleeping 5 s before their next look, and then died: their
            // entries outlive them until that look plus a second, as a dead JVM's do
            for (String dead : List.of("dead-client-1", "dead-client-2")) {
                new LockScripts(redis, new RedisLockKeys(RedisLockConfig.DEFAULT_KEY_PREFIX), dead)
                        .acquire(key, dead + ":1:1", 30_000, 5_000, false);
            }
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                try (LockHandle taken = live.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
                    return System.nanoTime();
                }
            });
            Await.until(() -> waiters().size() == 3, Duration.ofSeconds(5), "the live client registers behind the dead");
            assertThat(waiters().get(2)).isEqualTo(live.clientId());
            long releasedAt = System.nanoTime();
            held.release();
            long millis = TimeUnit.NANOSECONDS.toMillis(acquiredAt.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS) - releasedAt);
            System.out.println("live waiter held the lock " + millis + " ms after the release");
            // the dead clients' turn is 200 ms; before the fix the live client slept on until its next look, ~5 s
            assertThat(millis).as("ms from the release until the live waiter held the lock").isLessThan(1000);
        } finally {
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    private List<String> waiters() {
        return List.copyOf(redis.opsForZSet().range(waitersKey(), 0, -1));
    }

    private String waitersKey() {
        return "redis-lock:{" + key + "}:waiters";
    }
}
