package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.redislock.test.RedisServerProcess;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * 1,000 virtual threads (Java 21+) contending for one key, with JFR recording every
 * {@code jdk.VirtualThreadPinned} event (threshold zero): a virtual thread that parks while pinned to its carrier
 * (a monitor held on Java 21-23, a native frame on any version) would be reported. Skipped on Java 17; the
 * {@code jdk25} Maven profile runs it on JDK 25.
 */
class VirtualThreadPinningTest {

    @Test
    void aThousandVirtualThreadsOnOneKeyNeverLoseAnUpdateAndNeverPinTheirCarrier() throws Exception {
        ExecutorService pool = virtualThreadExecutor();
        Path jfr = Files.createTempFile("redis-lock-pinning", ".jfr");
        try (RedisServerProcess server = RedisServerProcess.start(); RedisClients clients = new RedisClients(server);
                Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            RedisLockTemplate first = clients.lockTemplate();
            RedisLockTemplate second = clients.lockTemplate();
            StringRedisTemplate redis = clients.redisTemplate();
            redis.opsForValue().set("counter", "0");
            int threads = 1000;
            // one cycle on a virtual thread first: loading a class pins a virtual thread while it loads (a JDK
            // limitation, once per class), and the first cycle loads the engine's
            pool.submit(() -> first.execute("warm-up", LockOptions.tryOnce(), lock -> null)).get(1, TimeUnit.MINUTES);
            recording.start();
            long start = System.nanoTime();
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                RedisLockTemplate template = t % 2 == 0 ? first : second;
                futures.add(pool.submit(() -> template.execute("hot", LockOptions.waitFor(Duration.ofMinutes(5)), lock -> {
                    long value = Long.parseLong(redis.opsForValue().get("counter")); // read-modify-write, not atomic
                    redis.opsForValue().set("counter", Long.toString(value + 1));
                    return null;
                })));
            }
            for (Future<?> future : futures) {
                future.get(5, TimeUnit.MINUTES);
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            recording.stop();
            recording.dump(jfr);
            // a virtual thread that waits while another initializes a JDK class (the socket poller on the first
            // blocking read, say) is pinned by the JDK itself, once per class: not the engine's doing
            List<RecordedEvent> pinned = RecordingFile.readAllEvents(jfr).stream()
                    .filter(event -> event.getEventType().getName().equals("jdk.VirtualThreadPinned"))
                    .filter(event -> !(event.hasField("pinnedReason") && String.valueOf(event.getString("pinnedReason"))
                            .matches("Waited for initialization of (java|javax|jdk|sun)\\..* by another thread")))
                    .toList();
            System.out.printf("%d virtual threads, one lock cycle each on one key over two clients: %d ms (%.0f cycles/s) on %s; "
                    + "%d jdk.VirtualThreadPinned events%n", threads, millis, threads * 1000.0 / Math.max(1, millis),
                    Runtime.version(), pinned.size());
            assertThat(redis.opsForValue().get("counter")).isEqualTo(Integer.toString(threads));
            assertThat(pinned).as("virtual threads pinned to their carrier:%n%s", describe(pinned)).isEmpty();
            assertThat(first.diagnostics().localLockCount() + second.diagnostics().localLockCount()).isZero();
        } finally {
            pool.shutdownNow();
            Files.deleteIfExists(jfr);
        }
    }

    private static String describe(List<RecordedEvent> pinned) {
        return pinned.stream().limit(5).map(event -> event.getStackTrace() == null ? event.toString()
                : event.getStackTrace().getFrames().stream().limit(12)
                        .map(frame -> "  at " + frame.getMethod().getType().getName() + "." + frame.getMethod().getName())
                        .collect(Collectors.joining("\n"))).collect(Collectors.joining("\n---\n"));
    }

    private static ExecutorService virtualThreadExecutor() {
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (NoSuchMethodException e) {
            assumeTrue(false, "virtual threads need Java 21+, running on " + Runtime.version());
            throw new IllegalStateException(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
