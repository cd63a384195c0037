package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

/**
 * A Boot application with {@code spring.threads.virtual.enabled=true} (Java 21+): {@code @Async} locked methods run
 * on virtual threads, and 500 of them contending (after one that loads the classes of the call path) for one key lose no update of a non-atomic counter, with no
 * {@code jdk.VirtualThreadPinned} event. Skipped on Java 17; the {@code jdk25} Maven profile runs it on JDK 25.
 */
@WithRedis
class VirtualThreadAnnotationTest {

    static RedisServerProcess server;

    @Test
    void asyncLockedMethodsOnVirtualThreadsNeverLoseAnUpdateAndNeverPin() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21+, running on " + Runtime.version());
        server.command("SET", "vt-counter", "0");
        int calls = 500;
        Path jfr = Files.createTempFile("redis-lock-annotation-pinning", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, TaskExecutionAutoConfiguration.class,
                            DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class))
                    .withPropertyValues("spring.threads.virtual.enabled=true", "spring.data.redis.host=" + server.host(),
                            "spring.data.redis.port=" + server.port(), "spring.data.redis.jedis.pool.max-active=32")
                    .withUserConfiguration(AsyncConfig.class)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Counter counter = context.getBean(Counter.class);
                        // the first call loads classes (key expressions, SpEL): a virtual thread loading a class is
                        // pinned while it does (a JDK limitation, once per class), so it runs before the recording
                        counter.increment();
                        assertThat(counter.awaitRemaining(calls)).isTrue();
                        recording.start();
                        long start = System.nanoTime();
                        for (int i = 0; i < calls; i++) {
                            counter.increment();
                        }
                        assertThat(counter.awaitDone()).isTrue();
                        recording.stop();
                        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                        System.out.printf("%d @Async @DistributedLock calls on virtual threads: %d ms on %s%n", calls, millis,
                                Runtime.version());
                        assertThat(counter.failures()).isEmpty();
                        assertThat(counter.virtualThreads()).as("whether each call ran on a virtual thread").containsExactly(true);
                        assertThat(context.getBean(StringRedisTemplate.class).opsForValue().get("vt-counter"))
                                .isEqualTo(Integer.toString(calls + 1));
                    });
            recording.dump(jfr);
            List<RecordedEvent> pinned = RecordingFile.readAllEvents(jfr).stream()
                    .filter(event -> event.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
            System.out.println("jdk.VirtualThreadPinned events: " + pinned.size());
            assertThat(pinned).as("pinned: %s", pinned).isEmpty();
        } finally {
            Files.deleteIfExists(jfr);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncConfig {

        @org.springframework.context.annotation.Bean
        Counter counter(StringRedisTemplate redis) {
            return new Counter(redis, 500 + 1);
        }
    }

    static class Counter {

        private final StringRedisTemplate redis;
        final CountDownLatch done;
        final Set<Boolean> virtual = ConcurrentHashMap.newKeySet();
        final Set<Throwable> failures = ConcurrentHashMap.newKeySet();

        Counter(StringRedisTemplate redis, int calls) {
            this.redis = redis;
            this.done = new CountDownLatch(calls);
        }

        // read through the proxy: its own fields are not the bean's
        public boolean awaitDone() throws InterruptedException {
            return done.await(5, TimeUnit.MINUTES);
        }

        public boolean awaitRemaining(long remaining) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while (done.getCount() > remaining && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            return done.getCount() == remaining;
        }

        public Set<Boolean> virtualThreads() {
            return virtual;
        }

        public Set<Throwable> failures() {
            return failures;
        }

        @Async
        @DistributedLock(key = "'vt-counter'", waitTime = "5m")
        public void increment() {
            try {
                virtual.add((Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread()));
                long value = Long.parseLong(redis.opsForValue().get("vt-counter")); // read-modify-write, not atomic
                redis.opsForValue().set("vt-counter", Long.toString(value + 1));
            } catch (Throwable e) {
                failures.add(e);
            } finally {
                done.countDown();
            }
        }
    }
}
