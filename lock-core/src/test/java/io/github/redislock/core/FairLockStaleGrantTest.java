package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.HeldSections.Section;
import io.github.redislock.test.Await;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A fair-lock waiter W, first in the queue with W2 behind it, is handed the lock while it cannot hear of it (its JVM
 * stopped, or its connections to Redis stalled) for longer than the hand-over lasts: the hand-over expires, W2 takes
 * the lock, and when W comes back its refresh misses <em>before</em> the old hand-over message reaches it (the test
 * holds back W's pub/sub connection to force that order). W must not hold on that message: it waits on, and takes the
 * lock after W2, with a higher fencing token. Sections are timed by the Redis server's clock.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class FairLockStaleGrantTest {

    static RedisServerProcess server;
    static StringRedisTemplate redis;
    static RedisLockTemplate holder;
    static RedisLockTemplate behind;

    @PerTest
    String key;
    @PerTest
    ExecutorService pool;

    private final List<JedisConnectionFactory> factories = new ArrayList<>();

    @AfterEach
    void closeFactories() {
        factories.forEach(JedisConnectionFactory::destroy);
    }

    @Test
    void aHandOverMessageThatReachesTheWaiterAfterItsHandOverExpiredIsNotHeldOnWhenThePubSubConnectionLags()
            throws Exception {
        try (HoldBackProxy commands = new HoldBackProxy(server.host(), server.port());
                HoldBackProxy subscription = new HoldBackProxy(server.host(), server.port());
                RedisLockTemplate waiter = new RedisLockTemplate(new StringRedisTemplate(
                        SubscriptionRouting.route(factory(commands), factory(subscription))), RedisLockConfig.defaults())) {
            LockHandle gate = holder.fairLock(key).acquire(LockOptions.tryOnce());
            Future<String> first = pool.submit(() -> holdOnce(waiter));
            awaitQueueLength(1);
            Await.until(waiter::isListening, Duration.ofSeconds(10), "W to subscribe");
            CountDownLatch secondMayRelease = new CountDownLatch(1);
            Future<?> second = pool.submit(() -> {
                try (LockHandle handle = behind.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    HeldSections.hold(redis, key, "W2", handle, () -> await(secondMayRelease));
                }
                return null;
            });
            awaitQueueLength(2);

            // W's network stalls; the release hands W the lock meanwhile, which expires, and W2 takes it
            commands.holdBack();
            subscription.holdBack();
            gate.release();
            awaitHolder(behind);
            // W's command connection comes back first: its refreshes miss; the hand-over message comes 400 ms later
            commands.letThrough();
            Thread.sleep(400);
            subscription.letThrough();
            Thread.sleep(600); // W, if it held on the old message, is in its section by now
            secondMayRelease.countDown();
            second.get(10, TimeUnit.SECONDS);
            String lost = first.get(10, TimeUnit.SECONDS);
            assertOneHolderAtATimeAndWAfterW2();
            assertThat(lost).as("W's release").isNull();
        }
    }

    @Test
    void aWaiterWhoseJvmWasStoppedAcrossTheReleaseDoesNotHoldOnTheExpiredHandOverMessage() throws Exception {
        try (HoldBackProxy subscription = new HoldBackProxy(server.host(), server.port())) {
            Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-Xmx128m", "-cp", System.getProperty("java.class.path"),
                    FairLockJvm.class.getName(), server.host(), Integer.toString(server.port()), subscription.host(),
                    Integer.toString(subscription.port())).redirectErrorStream(true).start();
            try {
                List<String> output = Collections.synchronizedList(new ArrayList<>());
                CompletableFuture<String> ready = new CompletableFuture<>();
                CompletableFuture<String> done = new CompletableFuture<>();
                Thread reader = new Thread(() -> readOutput(jvm, output, ready, done), "stopped-jvm-output");
                reader.setDaemon(true);
                reader.start();
                String clientId = ready.get(60, TimeUnit.SECONDS); // a JVM starting on a busy machine
                assertThat(clientId).as("child JVM ready: %s", output).doesNotStartWith("ended");
                Writer commands = new OutputStreamWriter(jvm.getOutputStream(), StandardCharsets.UTF_8);

                LockHandle gate = holder.fairLock(key).acquire(LockOptions.tryOnce());
                commands.write("section " + key + "\n");
                commands.flush();
                awaitQueueLength(1);
                Await.until(() -> subscribers("redis-lock:wake:" + clientId) == 1, Duration.ofSeconds(10),
                        "W to subscribe, through the proxy");
                CountDownLatch secondMayRelease = new CountDownLatch(1);
                Future<?> second = pool.submit(() -> {
                    try (LockHandle handle = behind.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
                        HeldSections.hold(redis, key, "W2", handle, () -> await(secondMayRelease));
                    }
                    return null;
                });
                awaitQueueLength(2);

                // W's JVM stops; the release hands W the lock meanwhile, which expires, and W2 takes it
                subscription.holdBack();
                signal(jvm, "STOP");
                long stoppedAt = System.nanoTime();
                gate.release();
                awaitHolder(behind);
                long stoppedFor = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
                Thread.sleep(Math.max(0, 900 - stoppedFor));
                signal(jvm, "CONT");
                // W's refresh misses first; the hand-over message, held back, is dispatched after it
                Thread.sleep(300);
                subscription.letThrough();
                Thread.sleep(600); // W, if it held on the old message, is in its section by now
                secondMayRelease.countDown();
                second.get(10, TimeUnit.SECONDS);
                assertThat(done.get(10, TimeUnit.SECONDS)).as("W's section: %s", output).isEqualTo("section done");
                assertOneHolderAtATimeAndWAfterW2();
                assertThat(output).as("W's lock lost").noneMatch(line -> line.startsWith("lost"));
            } finally {
                signal(jvm, "CONT");
                jvm.destroyForcibly();
            }
        }
    }

    private static long subscribers(String channel) {
        Object reply = redis.execute((RedisCallback<Object>) connection -> connection.execute("PUBSUB",
                "NUMSUB".getBytes(StandardCharsets.UTF_8), channel.getBytes(StandardCharsets.UTF_8)));
        return reply instanceof List<?> numsub && numsub.size() == 2 && numsub.get(1) instanceof Long count ? count : 0;
    }

    private static void readOutput(Process jvm, List<String> output, CompletableFuture<String> ready,
            CompletableFuture<String> done) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("ready ")) {
                    ready.complete(line.substring("ready ".length()));
                } else if (line.equals("section done")) {
                    done.complete(line);
                } else {
                    output.add(line);
                }
            }
        } catch (IOException ended) {
            // the JVM was killed
        }
        ready.complete("ended");
        done.complete("ended");
    }

    private static void signal(Process jvm, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(jvm.pid())).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).as("kill -%s", signal).isTrue();
    }

    /** W: takes the lock once, holds it for 50 ms; returns why it was lost, if it was. */
    private String holdOnce(RedisLockTemplate waiter) {
        try (LockHandle handle = waiter.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
            HeldSections.hold(redis, key, "W", handle, () -> sleep(50));
        } catch (LockLostException e) {
            return e.getMessage();
        }
        return null;
    }

    private JedisConnectionFactory factory(HoldBackProxy proxy) {
        JedisConnectionFactory factory = proxy.jedisFactory();
        factories.add(factory);
        return factory;
    }

    private void assertOneHolderAtATimeAndWAfterW2() {
        List<Section> sections = HeldSections.read(redis, key);
        assertThat(sections).extracting(Section::who).containsExactlyInAnyOrder("W", "W2");
        List<Section> held = sections.stream().filter(Section::heldAtEnter).toList();
        assertThat(Intervals.maxConcurrency(held, Section::enter, Section::exit))
                .as("holders with isHeld() true at once, by the server's clock: %s", sections).isEqualTo(1);
        Section w = sections.stream().filter(s -> s.who().equals("W")).findFirst().orElseThrow();
        Section w2 = sections.stream().filter(s -> s.who().equals("W2")).findFirst().orElseThrow();
        assertThat(w.enter()).as("W waited on for W2 to release: %s", sections).isGreaterThan(w2.exit());
        assertThat(w.token()).as("W's fencing token above W2's").isGreaterThan(w2.token());
    }

    private void awaitQueueLength(long expected) throws InterruptedException {
        SlowSubscriptionTest.FairLockTestSupport.awaitQueueLength(redis, key, expected);
    }

    /** Until the lock in Redis is a thread of {@code template}'s. */
    private void awaitHolder(RedisLockTemplate template) throws InterruptedException {
        Await.until(() -> {
            String owner = redis.opsForValue().get("redis-lock:{" + key + "}");
            return owner != null && owner.startsWith(template.clientId() + ":");
        }, Duration.ofSeconds(10), "W2 to take the lock");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
