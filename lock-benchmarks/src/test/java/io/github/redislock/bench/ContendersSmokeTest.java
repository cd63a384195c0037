package io.github.redislock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;

/**
 * Keeps the benchmark runnable: every library locks and unlocks on a real Redis (and the fair, read/write and
 * semaphore types where it has them), and the report renders. No speed is asserted.
 */
class ContendersSmokeTest {

    @Test
    void everyContenderLocksExclusivelyAndTheReportRenders() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            for (String name : Contender.NAMES) {
                try (Contender one = Contender.create(name, redis.port()); Contender two = Contender.create(name, redis.port())) {
                    Lock first = one.lock("smoke");
                    first.lock();
                    Thread other = new Thread(() -> assertThat(two.lock("smoke").tryLock()).as(name).isFalse());
                    other.start();
                    other.join();
                    first.unlock();
                }
            }
            for (String name : Contender.NAMES) {
                if (!Contender.hasLockFamily(name)) {
                    continue;
                }
                try (Contender one = Contender.create(name, redis.port()); Contender two = Contender.create(name, redis.port())) {
                    Lock fair = one.fairLock("smoke-fair");
                    fair.lock();
                    ReadWriteLock readWrite = one.readWriteLock("smoke-rw");
                    readWrite.readLock().lock();
                    Runnable permit = one.semaphore("smoke-semaphore", 1).acquire();
                    Thread other = new Thread(() -> {
                        assertThat(two.fairLock("smoke-fair").tryLock()).as(name + " fair").isFalse();
                        ReadWriteLock theirs = two.readWriteLock("smoke-rw");
                        assertThat(theirs.writeLock().tryLock()).as(name + " write while read").isFalse();
                        assertThat(theirs.readLock().tryLock()).as(name + " read while read").isTrue();
                        theirs.readLock().unlock();
                    });
                    other.start();
                    other.join();
                    permit.run();
                    readWrite.readLock().unlock();
                    fair.unlock();
                }
            }
            LockBenchmark.Results results = new LockBenchmark.Results();
            results.add("S1 ops/s", LockBenchmark.OURS, 100);
            results.add("S1 ops/s", "redisson", 50);
            results.add("S1 ops/s", LockBenchmark.OURS_LETTUCE, 75);
            assertThat(Chart.svg(results)).startsWith("<svg").contains("redis-lock").contains("redis-lock-lettuce");
            assertThat(LockBenchmark.table(results)).contains("| S1 ops/s | Jedis | 100 | 50.00 |")
                    .contains("| S1 ops/s | Lettuce | 75.00 | 50.00 |").contains("| 1.50× |");
            results.add("S7 fair ops/s (4 JVMs x 4 threads, one key)", LockBenchmark.OURS, 400);
            results.add("S7 fair ops/s (4 JVMs x 4 threads, one key)", "redisson", 100);
            assertThat(Targets.evaluate(results)).contains("S7 fair hot key at least 5× Redisson's fair lock | 4.00× redisson | **no**")
                    .contains("S8 read-mostly at least 2× Redisson's | not measured")
                    .contains("| (context) S4's pub/sub floor (PUBLISH; the subscriber wakes the waiter), Lettuce against Jedis "
                            + "| not measured | – |");
            results.add(LockBenchmark.S4_FAIR_FLOOR_ROW, LockBenchmark.OURS, 171);
            results.add(LockBenchmark.S4_FAIR_FLOOR_ROW, LockBenchmark.OURS_LETTUCE, 181);
            assertThat(Targets.evaluate(results)).contains("| (context) S4's pub/sub floor (PUBLISH; the subscriber wakes the "
                    + "waiter), Lettuce against Jedis | 1.06× Jedis's (181 µs against 171 µs) | – |");
            // Spring Integration's registry stands beside each row of ours on that row's driver
            results.add("S1 ops/s", "si-spin", 200);
            results.add("S1 ops/s", "si-spin-lettuce", 60);
            assertThat(LockBenchmark.table(results)).contains("| S1 ops/s | Jedis | 100 | 50.00 | – | 200 | 2.00× | – | 0.50× |")
                    .contains("| S1 ops/s | Lettuce | 75.00 | 50.00 | – | 60.00 | 1.50× | – | 1.25× |");
            // "ahead of every peer" reads the row measured with every library in turns
            results.add(LockBenchmark.S1_IN_TURNS_ROW, LockBenchmark.OURS, 100);
            results.add(LockBenchmark.S1_IN_TURNS_ROW, LockBenchmark.OURS_LETTUCE, 75);
            results.add(LockBenchmark.S1_IN_TURNS_ROW, "si-spin", 200);
            results.add(LockBenchmark.S1_IN_TURNS_ROW, "si-spin-lettuce", 60);
            results.add(LockBenchmark.S1_IN_TURNS_ROW, "redisson", 50);
            assertThat(Targets.evaluate(results))
                    .contains("S1 ops/s at least 1.3× Redisson's, every library in turns (Jedis) | 2.00× redisson | yes")
                    .contains("S1 ops/s at least 1.3× Redisson's, every library in turns (Lettuce) | 1.50× redisson | yes")
                    .contains("S1 ops/s ahead of every peer, every library in turns (Jedis) | 0.50× si-spin | **no**")
                    .contains("S1 ops/s ahead of every peer, every library in turns (Lettuce) | 1.25× si-spin-lettuce | yes")
                    .contains("(whole JVM) S1 CPU per lock+unlock, every thread, at or below the leanest peer's (Jedis) | not measured");
        }
    }
}
