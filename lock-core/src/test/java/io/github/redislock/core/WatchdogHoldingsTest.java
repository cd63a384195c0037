package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** How the watchdog tells holdings apart (pure logic: the batched renewal is a fake that records its calls). */
class WatchdogHoldingsTest {

    @Test
    void twoHoldingsWithTheSameOwnerTokenAndLeaseAreRenewedTogetherAsTwo() throws Exception {
        // two keys granted the same fencing token to this client by message carry the same owner id ("<client>:grant:7")
        Duration lease = Duration.ofMillis(1200);
        List<List<String>> calls = new ArrayList<>();
        Renewer.Many many = (keys, owners, leases) -> {
            synchronized (calls) {
                calls.add(List.copyOf(keys));
            }
            return new Renewer.Replies("1".repeat(keys.size()), null);
        };
        Renewer renewer = new Renewer(LockType.EXCLUSIVE, (key, owner, leaseMillis) -> true, many);
        try (Watchdog watchdog = new Watchdog(lease, 8)) {
            long now = System.nanoTime();
            for (String key : List.of("a", "b")) {
                LocalLock lock = new LocalLock(key);
                lock.held("client:grant:7", 7, lease.toNanos(), now, true);
                watchdog.watch(lock, renewer);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < deadline) {
                synchronized (calls) {
                    if (!calls.isEmpty()) {
                        break;
                    }
                }
                Thread.sleep(10);
            }
            synchronized (calls) {
                assertThat(calls).as("renewal calls").isNotEmpty();
                assertThat(calls.get(0)).as("the first renewal's keys").containsExactlyInAnyOrder("a", "b");
            }
        }
    }
}
