package io.github.redislock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.locks.Lock;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;

/** Keeps the benchmark runnable: every library locks and unlocks on a real Redis, and the report renders. No speed is asserted. */
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
            LockBenchmark.Results results = new LockBenchmark.Results();
            results.add("S1 ops/s", LockBenchmark.OURS, 100);
            results.add("S1 ops/s", "redisson", 50);
            assertThat(Chart.svg(results)).startsWith("<svg").contains("redis-lock");
            assertThat(Targets.evaluate(results)).contains("S1 ops/s at least 1.3× Redisson's | 2.00× redisson | yes");
        }
    }
}
