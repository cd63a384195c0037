package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The fair lock on a three-master Redis Cluster: its queue shares the lock's slot, so every script runs on one node. */
@WithRedisCluster
@ExtendWith(RedisClientsExtension.class)
class FairLockClusterTest {

    static RedisClusterProcesses cluster;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    @Test
    void fairLocksOnEveryMasterHandOverToTheirWaitersInArrivalOrder() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        Set<String> mastersUsed = new HashSet<>();
        try {
            for (int k = 0; k < 12; k++) {
                String key = "fair:" + k;
                LockHandle gate = first.fairLock(key).acquire(LockOptions.tryOnce());
                mastersUsed.add(masterOf("redis-lock:{" + key + "}"));
                List<Integer> acquired = Collections.synchronizedList(new ArrayList<>());
                List<Long> tokens = Collections.synchronizedList(new ArrayList<>(List.of(gate.fencingToken())));
                List<Future<?>> futures = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    int waiter = i;
                    RedisLockTemplate template = i % 2 == 0 ? second : first;
                    futures.add(pool.submit(() -> {
                        try (LockHandle handle = template.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
                            acquired.add(waiter);
                            tokens.add(handle.fencingToken());
                        }
                        return null;
                    }));
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (redis.opsForZSet().zCard("redis-lock:{" + key + "}:queue") != i + 1) {
                        assertThat(System.nanoTime()).as("waiter %d queued", i).isLessThan(end);
                        Thread.sleep(2);
                    }
                }
                gate.release();
                for (Future<?> future : futures) {
                    future.get(10, TimeUnit.SECONDS);
                }
                assertThat(acquired).containsExactly(0, 1, 2, 3);
                FairLockTest.assertStrictlyIncreasing(tokens);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(mastersUsed).hasSize(3);
    }

    private static String masterOf(String key) {
        RedisServerProcess master = cluster.masterHolding(key);
        return master.host() + ":" + master.port();
    }
}
