package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The read/write lock behind Redis Sentinel: readers share, a waiting writer is woken, on the master. */
@WithRedisSentinel(freshForEachTest = true)
@ExtendWith(RedisClientsExtension.class)
class RedisSentinelReadWriteLockTest {

    RedisSentinelProcesses sentinel;
    RedisLockTemplate first;
    RedisLockTemplate second;

    @Test
    void readersShareThroughTheSentinelsAndAWaitingWriterIsWokenWhenTheyLeave() throws Exception {
        List<String> key = List.of("catalog:1");
        ExecutorService writerThread = Executors.newSingleThreadExecutor();
        try {
            MultiLockHandle reading = first.acquireAll(key, LockOptions.tryOnce(), LockType.READ);
            MultiLockHandle alsoReading = writerThread.submit(() -> second.acquireAll(key, LockOptions.tryOnce(), LockType.READ))
                    .get(10, TimeUnit.SECONDS);
            assertThat(sentinel.master().command("ZCARD", "redis-lock:{catalog:1}:rw:readers")).isEqualTo("2");
            writerThread.submit(alsoReading::release).get(10, TimeUnit.SECONDS);
            Future<Long> writing = writerThread.submit(() -> {
                try (MultiLockHandle w = second.acquireAll(key, LockOptions.waitFor(Duration.ofSeconds(10)), LockType.WRITE)) {
                    return w.fencingToken("catalog:1");
                }
            });
            Thread.sleep(100);
            assertThat(writing).isNotDone();
            long readToken = reading.fencingToken("catalog:1");
            reading.release();
            assertThat(writing.get(2, TimeUnit.SECONDS)).isGreaterThan(readToken);
        } finally {
            writerThread.shutdownNow();
        }
    }
}
