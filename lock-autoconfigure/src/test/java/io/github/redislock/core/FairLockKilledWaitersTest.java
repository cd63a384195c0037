package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;

/** Waiters in other JVMs killed with SIGKILL while queued for a fair lock: the live waiter behind them barely notices. */
class FairLockKilledWaitersTest {

    @Test
    void threeWaitingJvmsKilledWithSigkillCostTheNextWaiterUnderASecondInTotal() throws Exception {
        String key = "killed-waiters";
        List<Process> doomed = new ArrayList<>();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RedisServerProcess server = RedisServerProcess.start(); RedisClients clients = new RedisClients(server)) {
            RedisLockTemplate holder = clients.lockTemplate();
            RedisLockTemplate live = clients.lockTemplate();
            LockHandle held = holder.acquireFair(key, LockOptions.tryOnce());
            for (int i = 0; i < 3; i++) {
                doomed.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                        FairWaiterProcess.class.getName(), server.host(), Integer.toString(server.port()), key)
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
                awaitQueueLength(server, key, i + 1);
            }
            long[] acquiredAt = new long[1];
            Future<?> next = pool.submit(() -> {
                try (LockHandle handle = live.acquireFair(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    acquiredAt[0] = System.nanoTime();
                }
                return null;
            });
            awaitQueueLength(server, key, 4);
            for (Process process : doomed) {
                process.destroyForcibly(); // SIGKILL: no shutdown hook, no leave, the entries stay behind
            }
            for (Process process : doomed) {
                assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            }
            long releasedAt = System.nanoTime();
            held.release();
            next.get(10, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - releasedAt)).isLessThan(1000);
        } finally {
            doomed.forEach(Process::destroyForcibly);
            pool.shutdownNow();
        }
    }

    private static void awaitQueueLength(RedisServerProcess server, String key, int expected) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // a JVM starting on a busy machine
        while (!server.command("ZCARD", "redis-lock:{" + key + "}:queue").equals(Integer.toString(expected))) {
            assertThat(System.nanoTime()).as("waiter %d queued", expected).isLessThan(end);
            Thread.sleep(10);
        }
    }
}
