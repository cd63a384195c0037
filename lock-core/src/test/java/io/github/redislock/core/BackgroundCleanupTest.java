package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** How {@link BackgroundCleanup} retries a task while it fails (pure logic: the task fails on its own, no Redis). */
class BackgroundCleanupTest {

    @Test
    void aFailingTaskIsTriedAgainAtLeastEveryEighthOfTheLeaseUntilItWorks() throws Exception {
        Duration lease = Duration.ofMillis(1600);
        try (Watchdog watchdog = new Watchdog(lease, 8)) {
            BackgroundCleanup cleanup = new BackgroundCleanup(watchdog, key -> null, lease, () -> false);
            List<Long> tries = new ArrayList<>();
            CountDownLatch worked = new CountDownLatch(1);
            long start = System.nanoTime();
            cleanup.run("key", () -> {
                long at = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                synchronized (tries) {
                    tries.add(at);
                }
                if (at < 800) { // Redis is back after 800 ms
                    throw new IllegalStateException("Redis cannot be reached");
                }
                worked.countDown();
            });
            assertThat(worked.await(5, TimeUnit.SECONDS)).isTrue();
            long longestPause = 0;
            synchronized (tries) {
                for (int i = 1; i < tries.size(); i++) {
                    longestPause = Math.max(longestPause, tries.get(i) - tries.get(i - 1));
                }
            }
            // doubling from 50 ms: 50, 100, 200 (an eighth of 1.6 s), 200...; with pauses up to 1 s it was 400, then 800
            assertThat(longestPause).as("longest pause between tries, ms, of " + tries).isLessThan(200 + 150);
        }
    }
}
