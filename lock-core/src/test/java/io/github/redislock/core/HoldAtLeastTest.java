package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** {@code LockOptions.withHoldAtLeast}: a release before the minimum hold leaves the lock to expire then. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class HoldAtLeastTest {

    RedisLockTemplate template;
    RedisLockTemplate other;
    StringRedisTemplate redis;

    @Test
    void aReleaseBeforeTheMinimumHoldLeavesTheLockToExpireThenAndNoOtherClientGetsItBefore() {
        Duration hold = Duration.ofMillis(1500);
        long start = System.nanoTime();
        LockHandle handle = template.acquire("hold:early", LockOptions.tryOnce().withHoldAtLeast(hold));
        long acquired = System.nanoTime();
        handle.release();
        long released = System.nanoTime();

        assertThat(handle.isHeld()).isFalse();
        long ttl = redis.getExpire("redis-lock:{hold:early}", TimeUnit.MILLISECONDS);
        assertThat(ttl).as("left to expire at acquisition + holdAtLeast").isPositive()
                .isLessThanOrEqualTo(hold.toMillis() - TimeUnit.NANOSECONDS.toMillis(released - acquired) + 1);
        assertThat(other.tryAcquire("hold:early", LockOptions.tryOnce())).as("another client, at once").isEmpty();
        assertThat(template.tryAcquire("hold:early", LockOptions.tryOnce())).as("the holder's own threads too").isEmpty();

        try (LockHandle next = other.acquire("hold:early", LockOptions.waitFor(Duration.ofSeconds(10)))) {
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.println("holdAtLeast 1500 ms, released after " + TimeUnit.NANOSECONDS.toMillis(released - start)
                    + " ms: the next client got it " + tookMs + " ms after the first asked for it");
            assertThat(System.nanoTime() - acquired).isGreaterThanOrEqualTo(hold.toNanos());
            assertThat(next.fencingToken()).isGreaterThan(handle.fencingToken());
        }
    }

    @Test
    void aReleaseAfterTheMinimumHoldDeletesTheLockAtOnce() throws InterruptedException {
        LockHandle handle = template.acquire("hold:late", LockOptions.tryOnce().withHoldAtLeast(Duration.ofMillis(100)));
        long acquired = System.nanoTime();
        while (System.nanoTime() - acquired < TimeUnit.MILLISECONDS.toNanos(150)) {
            Thread.sleep(10); // the minimum hold is the behaviour under test: let it pass
        }
        handle.release();
        assertThat(redis.hasKey("redis-lock:{hold:late}")).isFalse();
        assertThat(other.tryAcquire("hold:late", LockOptions.tryOnce())).isPresent().get().satisfies(LockHandle::release);
    }

    @Test
    void aLockReleasedBeforeItsMinimumHoldIsListedAsHeldUntilRedisLetsItGo() throws InterruptedException {
        Duration hold = Duration.ofSeconds(3); // ample for one release round trip on a loaded machine
        LockHandle handle = template.acquire("hold:listed", LockOptions.tryOnce().withHoldAtLeast(hold).withName("report"));
        List<RedisLockDiagnostics.HeldLock> whileHeld = template.diagnostics().heldLocks();
        assertThat(whileHeld).singleElement().satisfies(lock -> assertThat(lock.heldUntil()).isNull());
        Instant released = Instant.now();
        handle.release();

        List<RedisLockDiagnostics.HeldLock> afterRelease = template.diagnostics().heldLocks();
        assertThat(afterRelease).as("still held in Redis").singleElement().satisfies(lock -> {
            assertThat(lock.key()).isEqualTo("hold:listed");
            assertThat(lock.name()).isEqualTo("report");
            assertThat(lock.fencingToken()).isEqualTo(handle.fencingToken());
            assertThat(lock.renewing()).isFalse();
            assertThat(lock.heldUntil()).isAfter(released).isBeforeOrEqualTo(released.plus(hold));
            assertThat(lock.leaseLeft()).isPositive().isLessThanOrEqualTo(hold);
            assertThat(lock.thread()).isEqualTo(Thread.currentThread().getName());
        });
        Instant until = afterRelease.get(0).heldUntil();

        try (LockHandle next = other.acquire("hold:listed", LockOptions.waitFor(Duration.ofSeconds(10)))) {
            assertThat(Instant.now()).as("another client got it once the minimum hold ended").isAfterOrEqualTo(until);
            assertThat(template.diagnostics().heldLocks()).as("no longer listed once Redis let it go").isEmpty();
        }
    }

    @Test
    void aLockReleasedAfterItsMinimumHoldIsNoLongerListed() throws InterruptedException {
        LockHandle handle = template.acquire("hold:unlisted", LockOptions.tryOnce().withHoldAtLeast(Duration.ofMillis(50)));
        long acquired = System.nanoTime();
        while (System.nanoTime() - acquired < TimeUnit.MILLISECONDS.toNanos(100)) {
            Thread.sleep(10); // the minimum hold is the behaviour under test: let it pass
        }
        handle.release();
        assertThat(template.diagnostics().heldLocks()).isEmpty();
    }

    @Test
    void aNestedReleaseKeepsTheLockAndTheOutermostDecides() {
        LockHandle outer = template.acquire("hold:nested", LockOptions.tryOnce());
        LockHandle inner = template.acquire("hold:nested", LockOptions.tryOnce().withHoldAtLeast(Duration.ofSeconds(5)));
        inner.release();
        assertThat(outer.isHeld()).isTrue();
        outer.release();
        assertThat(redis.hasKey("redis-lock:{hold:nested}")).as("the outermost hold had no minimum").isFalse();
    }

    @Test
    void severalKeysAreEachHeldUntilTheMinimum() {
        template.acquireAll(List.of("hold:a", "hold:b"), LockOptions.tryOnce().withHoldAtLeast(Duration.ofSeconds(5))).release();
        assertThat(other.tryAcquireAll(List.of("hold:a"), LockOptions.tryOnce())).isEmpty();
        assertThat(other.tryAcquireAll(List.of("hold:b"), LockOptions.tryOnce())).isEmpty();
        redis.delete(List.of("redis-lock:{hold:a}", "redis-lock:{hold:b}"));
    }

    @Test
    void aMinimumHoldLongerThanTheLeaseOrOnAnotherLockTypeIsRefused() {
        assertThatThrownBy(() -> LockOptions.waitFor(Duration.ZERO).withLease(Duration.ofSeconds(2))
                .withHoldAtLeast(Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("holdAtLeast (5s) must not be longer than the lease (2s): the lock could not stay held that long");
        assertThatThrownBy(() -> LockOptions.tryOnce().withHoldAtLeast(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdAtLeast must be positive");
        LockOptions held = LockOptions.tryOnce().withHoldAtLeast(Duration.ofSeconds(1));
        assertThatThrownBy(() -> template.fairLock("hold:fair").acquire(held)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holdAtLeast is supported by the exclusive lock only, not by the fair lock");
        assertThatThrownBy(() -> template.acquireAll(List.of("hold:rw"), held, LockType.READ))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not by the read lock");
        assertThatThrownBy(() -> template.semaphore("hold:sem", 2).acquire(held))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not by the semaphore lock");
    }
}
