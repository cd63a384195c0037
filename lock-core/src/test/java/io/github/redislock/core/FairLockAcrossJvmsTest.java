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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The fair lock's promises across JVMs: four child JVMs ({@link FairLockJvm}) queue threads on one key, and the
 * lock goes to them in the order their requests reached Redis, read from the fair lock's queue in Redis; waiters
 * in JVMs killed with SIGKILL are skipped within a bounded time. The JVMs are started once for the class; the test
 * that kills three of them runs last.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FairLockAcrossJvmsTest {

    private static final int JVMS = 4;

    static RedisServerProcess server;
    static RedisLockTemplate gatekeeper;
    static RedisLockTemplate live;
    static StringRedisTemplate redis;

    private static final List<ChildJvm> children = new ArrayList<>();

    /** A child JVM, its command input and the first line it printed ({@code ready <client id>}). */
    private record ChildJvm(Process process, Writer commands, CompletableFuture<String> ready, List<String> output) {

        void send(String command) throws IOException {
            commands.write(command + "\n");
            commands.flush();
        }
    }

    @BeforeAll
    static void startJvms() throws Exception {
        for (int i = 0; i < JVMS; i++) {
            Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-Xmx128m", "-cp", System.getProperty("java.class.path"),
                    FairLockJvm.class.getName(), server.host(), Integer.toString(server.port()))
                    .redirectErrorStream(true).start();
            ChildJvm child = new ChildJvm(process, new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8),
                    new CompletableFuture<>(), new CopyOnWriteArrayList<>());
            Thread reader = new Thread(() -> readOutput(child), "fair-jvm-" + i + "-output");
            reader.setDaemon(true);
            reader.start();
            children.add(child);
        }
        for (ChildJvm child : children) {
            // a JVM starting on a busy machine
            assertThat(child.ready().get(60, TimeUnit.SECONDS)).as("child JVM ready").startsWith("ready ");
        }
    }

    private static void readOutput(ChildJvm child) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.process().getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("ready ")) {
                    child.ready().complete(line);
                } else {
                    child.output().add(line); // errors, shown if a test fails
                }
            }
        } catch (IOException ended) {
            // the JVM was killed
        }
        child.ready().complete("ended: " + child.output());
    }

    @AfterAll
    static void stopJvms() {
        children.forEach(child -> child.process().destroyForcibly());
    }

    @Test
    @Order(1)
    void twoHundredAcquisitionsFromFourJvmsFollowTheOrderOfArrivalInRedisOneHolderAtATime() throws Exception {
        String key = "jvm-fair";
        String queue = "redis-lock:{" + key + "}:queue";
        int rounds = 5;
        int threadsPerJvm = 10;
        int perRound = JVMS * threadsPerJvm;
        List<String> arrivals = new ArrayList<>();
        List<String> requeued = new ArrayList<>();
        ExecutorService watcher = Executors.newSingleThreadExecutor();
        long started = System.nanoTime();
        try {
            for (int round = 0; round < rounds; round++) {
                long roundStart = System.nanoTime();
                // the gate keeps the lock taken until every thread of this round queued, all JVMs arriving at once
                LockHandle gate = gatekeeper.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(10)));
                // a gate the previous round's last holder handed over is confirmed in the background, and until then
                // the gatekeeper's entry stays at the head of the queue (as designed): counted, it would be a 41st
                awaitUntil(() -> redis.opsForZSet().range(queue, 0, -1).stream()
                        .noneMatch(waiter -> waiter.startsWith(gatekeeper.clientId() + ":")), "the gate confirmed", 10);
                for (ChildJvm child : children) {
                    child.send("queue " + threadsPerJvm + " " + key);
                }
                awaitUntil(() -> queueLength(key) == perRound, "all " + perRound + " threads queued", 30);
                Map<String, Double> arrival = new HashMap<>();
                redis.opsForZSet().rangeWithScores(queue, 0, -1).forEach(entry -> arrival.put(entry.getValue(), entry.getScore()));
                assertThat(arrival).as("the queue: waiter ids by arrival in Redis").hasSize(perRound);
                // a waiter whose JVM pauses past its entry's life is taken for dead and queues again, at the end
                Map<String, Double> latestArrival = new ConcurrentHashMap<>(arrival);
                AtomicBoolean serving = new AtomicBoolean(true);
                Future<?> watching = watcher.submit(() -> {
                    while (serving.get()) {
                        redis.opsForZSet().rangeWithScores(queue, 0, -1)
                                .forEach(entry -> latestArrival.put(entry.getValue(), entry.getScore()));
                        Thread.sleep(1);
                    }
                    return null;
                });
                gate.release();
                int expected = arrivals.size() + perRound;
                awaitUntil(() -> redis.opsForList().size("{" + key + "}:order") == expected, "round served", 60);
                serving.set(false);
                watching.get(10, TimeUnit.SECONDS);
                latestArrival.forEach((waiter, score) -> {
                    if (!score.equals(arrival.get(waiter))) {
                        requeued.add(waiter);
                    }
                });
                latestArrival.entrySet().stream().sorted(Map.Entry.comparingByValue())
                        .forEach(entry -> arrivals.add(entry.getKey()));
                System.out.println("round " + round + ": " + perRound + " acquisitions in "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - roundStart) + " ms");
            }
        } finally {
            watcher.shutdownNow();
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        List<String> served = redis.opsForList().range("{" + key + "}:order", 0, -1);
        List<String> owners = served.stream().map(entry -> entry.split(" ")[0]).toList();
        List<Long> tokens = served.stream().map(entry -> Long.parseLong(entry.split(" ")[1])).toList();
        System.out.println("Fair lock across " + JVMS + " JVMs: " + served.size() + " acquisitions in " + rounds
                + " rounds of " + perRound + " queued threads, " + elapsedMs + " ms in all; " + requeued.size()
                + " waiters taken for dead after a pause and queued again");
        List<String> pauses = children.stream().map(child -> child.output().toString()).toList();
        assertThat(arrivals).as("every waiter queued once").doesNotHaveDuplicates()
                .allSatisfy(waiter -> assertThat(children.stream().anyMatch(child -> waiter.startsWith(clientId(child) + ":")))
                        .as("%s is a waiter of a child JVM", waiter).isTrue());
        assertThat(children).allSatisfy(child -> assertThat(arrivals).filteredOn(w -> w.startsWith(clientId(child) + ":"))
                .hasSize(rounds * threadsPerJvm));
        assertThat(owners).as("holders in order of acquisition, against arrival in Redis (waiters queued again: %s; "
                + "pauses of the child JVMs: %s)", requeued, pauses).hasSize(rounds * perRound).isEqualTo(arrivals);
        assertThat(redis.opsForValue().get("{" + key + "}:counter")).as("no update lost")
                .isEqualTo(Integer.toString(rounds * perRound));
        FairLockTest.assertStrictlyIncreasing(tokens);
    }

    @Test
    @Order(2)
    void threeWaitersInJvmsKilledWithSigkillCostTheNextLiveWaiterUnderASecondInTotal() throws Exception {
        String key = "jvm-fair-killed";
        List<ChildJvm> doomed = children.subList(0, 3);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            LockHandle held = gatekeeper.fairLock(key).acquire(LockOptions.tryOnce());
            for (int i = 0; i < doomed.size(); i++) {
                doomed.get(i).send("queue 1 " + key);
                int queued = i + 1;
                awaitUntil(() -> queueLength(key) == queued, "waiter " + queued + " queued", 30);
            }
            Future<Long> next = pool.submit(() -> {
                try (LockHandle handle = live.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    return System.nanoTime();
                }
            });
            awaitUntil(() -> queueLength(key) == 4, "the live waiter queued behind the three", 30);
            assertThat(redis.opsForZSet().range("redis-lock:{" + key + "}:queue", 0, -1)).last().asString()
                    .startsWith(live.clientId() + ":");
            for (ChildJvm child : doomed) {
                child.process().destroyForcibly(); // SIGKILL: no shutdown hook, no leave, the entries stay behind
            }
            for (ChildJvm child : doomed) {
                assertThat(child.process().waitFor(10, TimeUnit.SECONDS)).as("killed").isTrue();
            }
            long releasedAt = System.nanoTime(); // at once: the release hands the lock to the first dead waiter
            held.release();
            long skippedMs = TimeUnit.NANOSECONDS.toMillis(next.get(10, TimeUnit.SECONDS) - releasedAt);
            System.out.println("Fair lock: 3 waiters killed with SIGKILL cost the live waiter behind them " + skippedMs
                    + " ms after the release");
            assertThat(skippedMs).as("release to the live waiter's acquisition, past three dead waiters").isLessThan(1000);
            assertThat(redis.opsForList().size("{" + key + "}:order")).as("no dead waiter ever held it").isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    private static String clientId(ChildJvm child) {
        return child.ready().join().substring("ready ".length());
    }

    private static long queueLength(String key) {
        Long size = redis.opsForZSet().zCard("redis-lock:{" + key + "}:queue");
        return size == null ? 0 : size;
    }

    private static void awaitUntil(BooleanSupplier condition, String what, int seconds) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            for (ChildJvm child : children) {
                assertThat(child.output()).as("a child JVM's errors").noneMatch(line -> line.contains("Exception"));
            }
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(2);
        }
    }
}
