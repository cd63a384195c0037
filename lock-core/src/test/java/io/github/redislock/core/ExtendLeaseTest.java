package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** {@code RedisLockTemplate.extend}: a new fixed lease and minimum hold for a held lock (ShedLock's extend). */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class ExtendLeaseTest {

    RedisLockTemplate template;
    RedisLockTemplate other;
    StringRedisTemplate redis;

    @Test
    void anExtendedLockOutlivesItsFirstLeaseWithTheSameToken() throws InterruptedException {
        LockHandle handle = template.acquire("extend:lease", LockOptions.tryOnce().withLease(Duration.ofMillis(300)));

        assertThat(template.extend(handle, Duration.ofSeconds(10), null)).isTrue();
        Thread.sleep(400);

        assertThat(handle.isHeld()).isTrue();
        assertThat(redis.getExpire("redis-lock:{extend:lease}", TimeUnit.MILLISECONDS)).isBetween(8_000L, 10_000L);
        assertThat(other.tryAcquire("extend:lease", LockOptions.tryOnce())).isEmpty();
        long token = handle.fencingToken();
        handle.release();
        try (LockHandle next = other.acquire("extend:lease", LockOptions.tryOnce())) {
            assertThat(next.fencingToken()).isGreaterThan(token);
        }
    }

    @Test
    void aNewMinimumHoldKeepsTheLockAfterTheRelease() {
        LockHandle handle = template.acquire("extend:hold", LockOptions.tryOnce().withLease(Duration.ofSeconds(10)));

        assertThat(template.extend(handle, Duration.ofSeconds(10), Duration.ofSeconds(5))).isTrue();
        handle.release();

        assertThat(redis.getExpire("redis-lock:{extend:hold}", TimeUnit.MILLISECONDS)).isBetween(4_000L, 5_000L);
        assertThat(other.tryAcquire("extend:hold", LockOptions.tryOnce())).isEmpty();
    }

    @Test
    void aLockWhoseLeaseRanOutIsNotExtendedAndItsReleaseSaysItWasLost() throws InterruptedException {
        LockHandle handle = template.acquire("extend:late", LockOptions.tryOnce().withLease(Duration.ofMillis(50)));
        Thread.sleep(80);

        assertThat(template.extend(handle, Duration.ofSeconds(10), null)).isFalse();
        assertThat(redis.hasKey("redis-lock:{extend:late}")).isFalse();
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class);
    }

    @Test
    void onlyAFixedLeaseOnTheAcquiringThreadCanBeExtended() {
        try (LockHandle watched = template.acquire("extend:watchdog", LockOptions.tryOnce())) {
            assertThatThrownBy(() -> template.extend(watched, Duration.ofSeconds(10), null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("watchdog");
        }
        try (LockHandle fixed = template.acquire("extend:thread", LockOptions.tryOnce().withLease(Duration.ofSeconds(10)))) {
            assertThatThrownBy(() -> CompletableFuture.runAsync(() -> template.extend(fixed, Duration.ofSeconds(20), null))
                    .join()).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalMonitorStateException.class);
            assertThatThrownBy(() -> template.extend(fixed, Duration.ofSeconds(1), Duration.ofSeconds(2)))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
