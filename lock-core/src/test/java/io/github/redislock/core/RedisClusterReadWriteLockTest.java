package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The read/write lock on a three-master Redis Cluster: its seven keys share a slot, its locks spread over slots. */
@WithRedisCluster
@ExtendWith(RedisClientsExtension.class)
class RedisClusterReadWriteLockTest {

    static RedisClusterProcesses cluster;
    static RedisLockTemplate first;
    static RedisLockTemplate second;

    @Test
    void readersShareAndAWaitingWriterIsWokenOnKeysOnEveryMaster() throws Exception {
        ExecutorService a = Executors.newSingleThreadExecutor();
        ExecutorService b = Executors.newSingleThreadExecutor();
        Set<String> mastersUsed = new HashSet<>();
        try {
            for (int i = 0; i < 12; i++) {
                String key = "stock:" + i;
                ReadWriteLock mine = first.readWriteLock(key);
                ReadWriteLock theirs = second.readWriteLock(key);
                assertThat(a.submit(() -> mine.readLock().tryLock()).get(10, TimeUnit.SECONDS)).isTrue();
                assertThat(b.submit(() -> theirs.readLock().tryLock()).get(10, TimeUnit.SECONDS)).isTrue();
                mastersUsed.add(masterOf("redis-lock:{" + key + "}:rw:readers"));
                b.submit(() -> theirs.readLock().unlock()).get(10, TimeUnit.SECONDS);
                Future<Boolean> writing = b.submit(() -> theirs.writeLock().tryLock(10, TimeUnit.SECONDS));
                Thread.sleep(50);
                assertThat(writing).isNotDone();
                a.submit(() -> mine.readLock().unlock()).get(10, TimeUnit.SECONDS);
                assertThat(writing.get(2, TimeUnit.SECONDS)).isTrue(); // woken by the release, not a re-check at 30s
                assertThat(a.submit(() -> mine.readLock().tryLock()).get(10, TimeUnit.SECONDS)).isFalse();
                b.submit(() -> theirs.writeLock().unlock()).get(10, TimeUnit.SECONDS);
            }
        } finally {
            a.shutdownNow();
            b.shutdownNow();
        }
        assertThat(mastersUsed).hasSize(3);
    }

    private static String masterOf(String key) {
        RedisServerProcess master = cluster.masterHolding(key);
        return master.host() + ":" + master.port();
    }
}
