package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Intervals;
import io.github.redislock.test.RedisServerProcess;

/** Checks the driver-specific script paths ({@link JedisScriptCalls}, {@link LettuceScriptCalls}) share. */
final class ScriptCallChecks {

    private ScriptCallChecks() {
    }

    /** 4 threads lock and release keys "flushed:0" to "flushed:3" for 1.5 s while Redis flushes its scripts 5 times. */
    static void lockWhileScriptsAreFlushed(RedisLockTemplate locks, RedisServerProcess server) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                String key = "flushed:" + t;
                workers.add(pool.submit(() -> {
                    int cycles = 0;
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                    while (System.nanoTime() < end) {
                        try (LockHandle handle = locks.acquire(key, LockOptions.tryOnce())) {
                            assertThat(handle.isHeld()).isTrue();
                        }
                        cycles++;
                    }
                    return cycles;
                }));
            }
            for (int i = 0; i < 5; i++) {
                Thread.sleep(200);
                server.command("SCRIPT", "FLUSH");
            }
            for (Future<Integer> worker : workers) {
                assertThat(worker.get(30, TimeUnit.SECONDS)).isPositive();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(server.command("SCRIPT", "EXISTS", LockScripts.ACQUIRE.getSha1())).isEqualTo("1");
    }

    /** Two clients, two threads each, lock one key 25 times a thread: 100 sections, none overlapping. */
    static void assertTwoClientsExclude(RedisLockTemplate first, RedisLockTemplate second) throws Exception {
        List<long[]> sections = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                RedisLockTemplate locks = t % 2 == 0 ? first : second;
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < 25; i++) {
                        try (LockHandle handle = locks.acquire("shared", LockOptions.waitFor(Duration.ofSeconds(20)))) {
                            long enter = System.nanoTime();
                            Thread.sleep(1);
                            sections.add(new long[] {enter, System.nanoTime()});
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(sections).hasSize(100);
        assertThat(Intervals.maxConcurrency(sections, section -> section[0], section -> section[1])).isEqualTo(1);
    }
}
