package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BiFunction;

import io.github.redislock.test.Concurrently;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Many threads of two clients taking turns on one key, each lock type: once every thread has released, the lock is
 * free at once for a third client. A grant or hand-over that reached Redis after its thread had moved on would hold the
 * key for a thread that no longer waits (as a semaphore's hand-over once did, see
 * {@link RedisSemaphoreTest#manyThreadsCyclingOnFewPermitsLeaveNoPermitHeldOnceAllReleased}).
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class NothingLeftAfterContentionTest {

    private static final LockOptions WAIT_30S = LockOptions.waitFor(Duration.ofSeconds(30));

    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static RedisClients clients;

    @PerTest
    String key;

    enum Kind {
        EXCLUSIVE((locks, key) -> locks.lock(key)),
        FAIR((locks, key) -> locks.fairLock(key)),
        WRITE((locks, key) -> locks.readWriteLock(key).writeLock()),
        READ_AND_WRITE((locks, key) -> locks.readWriteLock(key).writeLock());

        final BiFunction<RedisLockTemplate, String, RedisLock> lock;

        Kind(BiFunction<RedisLockTemplate, String, RedisLock> lock) {
            this.lock = lock;
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aLockIsFreeAtOnceAfterManyThreadsOfTwoClientsTookTurns(Kind kind) {
        for (int attempt = 0; attempt < 3; attempt++) {
            Concurrently.run(16, 100, thread -> {
                RedisLockTemplate locks = thread % 2 == 0 ? first : second;
                // READ_AND_WRITE: a quarter of the threads read, so shares and writers meet
                RedisLock lock = kind == Kind.READ_AND_WRITE && thread % 4 == 1 ? locks.readWriteLock(key).readLock()
                        : kind.lock.apply(locks, key);
                try (LockHandle handle = lock.acquire(WAIT_30S)) {
                    assertThat(handle.isHeld()).isTrue();
                }
            });
            Optional<LockHandle> free = kind.lock.apply(clients.lockTemplate(), key).tryAcquire(LockOptions.tryOnce());
            assertThat(free).as("attempt %d: the lock is free once every thread released", attempt).isPresent();
            free.get().release();
        }
    }
}
