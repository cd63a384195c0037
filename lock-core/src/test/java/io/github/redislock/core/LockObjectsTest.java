package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock objects ({@link RedisLock}): every kind the template hands out has the same verbs, observed under its own
 * {@link LockType}, and shares the thread's holding with the {@code Lock} methods.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class LockObjectsTest {

    RedisLockTemplate template;
    RedisLockTemplate other;

    @Test
    void everyLockObjectHasTheVerbsAndReportsItsTypeToObservers() throws Exception {
        List<LockObserver.LockEvent> seen = new ArrayList<>();
        template.addObserver(new LockObserver() {
            @Override
            public Acquisition acquiring(LockEvent lock) {
                synchronized (seen) {
                    seen.add(lock);
                }
                return Acquisition.NONE;
            }
        });
        LockOperations operations = template; // the interface every backend implements
        RedisReadWriteLock readWrite = template.readWriteLock("objects:rw");
        List<RedisLock> locks = List.of(operations.lock("objects:x"), template.fairLock("objects:f"),
                readWrite.readLock(), readWrite.writeLock());
        assertThat(locks).extracting(RedisLock::type)
                .containsExactly(LockType.EXCLUSIVE, LockType.FAIR, LockType.READ, LockType.WRITE);
        assertThat(locks).extracting(RedisLock::key).containsExactly("objects:x", "objects:f", "objects:rw", "objects:rw");

        LockOptions options = LockOptions.waitFor(Duration.ofSeconds(2)).withName("objects");
        for (RedisLock lock : locks) {
            try (LockHandle handle = lock.acquire(options)) {
                assertThat(handle.isHeld()).as(lock + " acquire").isTrue();
            }
            assertThat(lock.tryAcquire(options)).as(lock + " tryAcquire").get().satisfies(LockHandle::release);
            long token = lock.execute(options, LockHandle::fencingToken);
            assertThat(token).as(lock + " execute").isPositive();
            CompletableFuture<String> async = lock.executeAsync(options,
                    () -> CompletableFuture.completedFuture(Thread.currentThread().getName()));
            assertThat(async.get(5, TimeUnit.SECONDS)).as(lock + " executeAsync").isNotNull();
        }
        synchronized (seen) {
            assertThat(seen).extracting(LockObserver.LockEvent::type).containsOnly(LockType.EXCLUSIVE, LockType.FAIR,
                    LockType.READ, LockType.WRITE);
            assertThat(seen).filteredOn(e -> e.type() == LockType.FAIR).hasSize(4);
            assertThat(seen).extracting(LockObserver.LockEvent::name).containsOnly("objects");
        }
    }

    @Test
    void theVerbsAndTheLockMethodsShareTheThreadsHoldingAndExcludeOtherClients() {
        RedisLock lock = template.lock("objects:shared");
        lock.lock();
        try (LockHandle nested = lock.acquire(LockOptions.tryOnce())) {
            assertThat(nested.isHeld()).isTrue();
            assertThat(other.lock("objects:shared").tryAcquire(LockOptions.tryOnce())).isEmpty();
            assertThat(other.lock("objects:shared").tryLock()).isFalse();
        } finally {
            lock.unlock();
        }
        assertThat(other.lock("objects:shared").tryLock()).isTrue();
        other.lock("objects:shared").unlock();
    }

    @Test
    void aLockObjectNamesItsKeyWhenTheWaitEndsWithoutTheLock() {
        try (LockHandle held = other.acquire("objects:busy", LockOptions.tryOnce())) {
            assertThatThrownBy(() -> template.fairLock("objects:busy").acquire(LockOptions.waitFor(Duration.ofMillis(100))))
                    .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("objects:busy");
            assertThatThrownBy(() -> template.lock("objects:busy").acquire(LockOptions.tryOnce()))
                    .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("objects:busy");
        }
    }

    @Test
    void acquireAllTakesTheExclusiveReadOrWriteLockAndRefusesTheOtherTypes() {
        try (MultiLockHandle reads = template.acquireAll(List.of("objects:a", "objects:b"), LockOptions.tryOnce(), LockType.READ)) {
            assertThat(other.tryAcquireAll(List.of("objects:b"), LockOptions.tryOnce(), LockType.READ)).get()
                    .satisfies(MultiLockHandle::release);
            assertThat(other.tryAcquireAll(List.of("objects:a"), LockOptions.tryOnce(), LockType.WRITE)).isEmpty();
        }
        assertThatThrownBy(() -> template.acquireAll(List.of("objects:a"), LockOptions.tryOnce(), LockType.FAIR))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FAIR");
    }
}
