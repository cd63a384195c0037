package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Who a release wakes when clients wait for an exclusive lock: the grant to the longest-waiting client (or, on Redlock,
 * the turn it keeps for the longest-waiting clients) must not strand a live waiter behind clients that died, and a JVM keeps its place while any of its threads waits.
 * The same holds for a semaphore's release and for a fair release that frees the key for the exclusive lock's waiters.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class WaiterTurnTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(10);

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;

    RedisLockTemplate holder;
    RedisLockTemplate live;

    @PerTest
    String key;

    @Test
    void aLiveWaiterBehindWaitersThatDiedGetsTheLockSoonAfterTheirTurnEnds() throws Exception {
        LockHandle held = holder.acquire(key, LockOptions.waitFor(LONG_WAIT));
        try {
            // two clients that registered as waiters, sleeping 5 s before their next look, and then died: their
            // entries outlive them until that look plus a second, as a dead JVM's do
            for (String dead : List.of("dead-client-1", "dead-client-2")) {
                new LockScripts(redis, new RedisLockKeys(RedisLockConfig.DEFAULT_KEY_PREFIX), dead)
                        .acquire(key, dead + ":1:1", 30_000, 5_000, false);
            }
            // arrival scores are server ms, and equal scores sort by name: the live client arrives a later ms
            Thread.sleep(5);
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                try (LockHandle taken = live.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
                    return System.nanoTime();
                }
            });
            Await.until(() -> waiters().size() == 3, Duration.ofSeconds(5), "the live client registers behind the dead");
            assertThat(waiters().get(2)).isEqualTo(live.clientId());
            long releasedAt = System.nanoTime();
            held.release();
            long millis = TimeUnit.NANOSECONDS.toMillis(acquiredAt.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS) - releasedAt);
            System.out.println("live waiter held the lock " + millis + " ms after the release");
            // the first dead client's grant lasts 500 ms; before the fix the live client slept on until its next look, ~5 s
            assertThat(millis).as("ms from the release until the live waiter held the lock").isLessThan(1000);
        } finally {
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    @Test
    void aThreadThatGivesUpLeavesItsClientsPlaceToTheClientsOtherWaitingThread() throws Exception {
        RedisLockTemplate later = clients.lockTemplate();
        LockHandle held = holder.acquire(key, LockOptions.waitFor(LONG_WAIT));
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            CompletableFuture<Boolean> givesUp = CompletableFuture.supplyAsync(() -> {
                assertThatThrownBy(() -> live.acquire(key, LockOptions.waitFor(Duration.ofMillis(1500))))
                        .isInstanceOf(LockNotAcquiredException.class);
                return true;
            });
            Await.until(() -> waiters().equals(List.of(live.clientId())), Duration.ofSeconds(5), "the first thread registers");
            Double arrival = redis.opsForZSet().score(waitersKey(), live.clientId());
            // the second thread queues in its JVM, behind the first (parked on the key's local lock)
            CompletableFuture<Long> stays = waiting(() -> {
                try (LockHandle taken = live.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
                    return System.nanoTime();
                }
            }, "the second thread queues locally");
            CompletableFuture<Long> laterClient = CompletableFuture.supplyAsync(() -> {
                try (LockHandle taken = later.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
                    return System.nanoTime();
                }
            });
            Await.until(() -> waiters().size() == 2, Duration.ofSeconds(5), "the later client registers");
            Double firstThreadsExpiry = expiry(live.clientId());
            assertThat(givesUp.get(5, TimeUnit.SECONDS)).isTrue();
            // the second thread's first look registers the client again, which moves its entry's expiry
            Await.until(() -> !firstThreadsExpiry.equals(expiry(live.clientId())), Duration.ofSeconds(5),
                    "the second thread looks");

            assertThat(waiters()).as("waiting clients in arrival order after one thread gave up")
                    .containsExactly(live.clientId(), later.clientId());
            assertThat(redis.opsForZSet().score(waitersKey(), live.clientId())).as("the client's arrival").isEqualTo(arrival);

            int before = monitor.count(WaiterTurnTest::isPublish);
            held.release();
            assertThat(stays.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isPositive();
            laterClient.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
            // MONITOR's lines arrive on a connection of their own, maybe after the clients' replies
            Await.until(() -> monitor.count(WaiterTurnTest::isPublish) > before, Duration.ofSeconds(5),
                    "the release's wake-up in MONITOR's output");
            List<String> wakes = monitor.lines(WaiterTurnTest::isPublish);
            assertThat(wakes.get(before)).as("the release's first wake-up goes to the longest-waiting client")
                    .contains("\"redis-lock:wake:" + live.clientId() + "\"");
        } finally {
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    @Test
    void aJvmWhoseWaitingThreadsAllGiveUpLeavesNoWaiterEntryBehind() throws Exception {
        LockHandle held = holder.acquire(key, LockOptions.waitFor(LONG_WAIT));
        try {
            CompletableFuture<Void> first = CompletableFuture.runAsync(() -> assertThatThrownBy(
                    () -> live.acquire(key, LockOptions.waitFor(Duration.ofMillis(600)))).isInstanceOf(LockNotAcquiredException.class));
            Await.until(() -> waiters().equals(List.of(live.clientId())), Duration.ofSeconds(5), "the first thread registers");
            // the second thread takes the first one's place in Redis when it gives up, then gives up too
            CompletableFuture<Void> second = CompletableFuture.runAsync(() -> assertThatThrownBy(
                    () -> live.acquire(key, LockOptions.waitFor(Duration.ofMillis(900)))).isInstanceOf(LockNotAcquiredException.class));
            first.get(5, TimeUnit.SECONDS);
            second.get(5, TimeUnit.SECONDS);
            // withdrawn, not left to go stale (that would take until the entry's next look plus a second)
            Await.until(() -> !redis.hasKey(waitersKey()), Duration.ofSeconds(2), "the JVM's waiter entry withdrawn");
            assertThat(live.diagnostics().localLockCount()).isZero();
        } finally {
            held.release();
        }
    }

    @Test
    void aStaleWaiterEntryDoesNotStopAReleaseHandingTheLockToTheNextThreadOfItsJvm() throws Exception {
        // a client that registered long ago and died: its entry went stale, and nothing has pruned it yet
        redis.opsForZSet().add(waitersKey(), "dead-client", 1);
        redis.opsForZSet().add(waitersKey() + ":expiry", "dead-client", 2);
        LockHandle held = live.acquire(key, LockOptions.waitFor(LONG_WAIT));
        CompletableFuture<Long> next = waiting(() -> tokenOnceHeld(live), "the next thread queues locally");
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            held.release();
            assertThat(next.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
            assertThat(monitor.count(RedisMonitor.evalsha(LockScripts.ACQUIRE)))
                    .as("acquisitions in Redis after the release: the release handed the lock over").isZero();
        }
        assertThat(redis.hasKey(waitersKey())).as("the stale entry pruned").isFalse();
    }

    @Test
    void aReleaseThatGrantsToAnotherClientRegistersItsJvmSoItsNextThreadAsksRedisAtMostOnceWhenGranted() throws Exception {
        RedisLockTemplate other = clients.lockTemplate();
        Await.until(() -> live.isListening() && other.isListening(), Duration.ofSeconds(10), "both clients to subscribe");
        LockHandle held = live.acquire(key, LockOptions.waitFor(LONG_WAIT));
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            CompletableFuture<Long> next = waiting(() -> tokenOnceHeld(live), "the next thread queues locally");
            CompletableFuture<Long> otherClient = CompletableFuture.supplyAsync(() -> tokenOnceHeld(other));
            Await.until(() -> waiters().equals(List.of(other.clientId())), Duration.ofSeconds(5), "the other client registers");

            held.release();
            // the release granted the lock to the other client, and registered this JVM behind it for the next thread
            long othersToken = otherClient.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
            long nextToken = next.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(othersToken).as("the waiting client goes first").isGreaterThan(held.fencingToken());
            assertThat(nextToken).as("then the next thread, granted the lock by its release").isGreaterThan(othersToken);
            // MONITOR's lines arrive on a connection of their own, maybe after the clients' replies: the next thread's
            // release is the last call this JVM makes
            Predicate<String> releases = RedisMonitor.evalsha(LockScripts.RELEASE);
            monitor.awaitCount(line -> releases.test(line) && line.contains("\"" + live.clientId() + ":"), 2,
                    Duration.ofSeconds(5), "the releases of both threads");
            Predicate<String> nextThreadsAsking = RedisMonitor.evalsha(LockScripts.ACQUIRE, live.clientId());
            System.out.println("acquisition calls of the next thread: " + monitor.count(nextThreadsAsking));
            // none when it held from the grant's message; one when it was granted more than 250 ms after the release
            // that registered its JVM (then it asks, and its request adopts the grant)
            assertThat(monitor.count(nextThreadsAsking))
                    .as("acquisition calls of the next thread: it slept until the other client's release granted it the "
                            + "lock, instead of first asking only to be told to wait").isLessThanOrEqualTo(1);
            assertThat(redis.hasKey(waitersKey())).as("no waiter entry left").isFalse();
        } finally {
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    @Test
    void aJvmRegisteredByItsReleaseWhoseNextThreadGivesUpLeavesNoWaiterEntryBehind() throws Exception {
        RedisLockTemplate other = clients.lockTemplate();
        Await.until(() -> live.isListening() && other.isListening(), Duration.ofSeconds(10), "both clients to subscribe");
        LockHandle held = live.acquire(key, LockOptions.waitFor(LONG_WAIT));
        CountDownLatch othersTurnEnds = new CountDownLatch(1);
        try {
            CompletableFuture<Boolean> givesUp = waiting(() -> {
                assertThatThrownBy(() -> live.acquire(key, LockOptions.waitFor(Duration.ofMillis(1500))))
                        .isInstanceOf(LockNotAcquiredException.class);
                return true;
            }, "the next thread queues locally");
            CompletableFuture<Void> othersHold = new CompletableFuture<>();
            CompletableFuture.runAsync(() -> {
                try (LockHandle taken = other.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
                    othersHold.complete(null);
                    othersTurnEnds.await();
                } catch (Throwable e) {
                    othersHold.completeExceptionally(e);
                }
            });
            Await.until(() -> waiters().equals(List.of(other.clientId())), Duration.ofSeconds(5), "the other client registers");
            held.release();
            othersHold.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(waiters()).as("the releasing JVM, registered for its next thread").containsExactly(live.clientId());
            givesUp.get(5, TimeUnit.SECONDS);
            // withdrawn, not left to go stale
            Await.until(() -> !redis.hasKey(waitersKey()), Duration.ofSeconds(2), "the JVM's waiter entry withdrawn");
            assertThat(live.diagnostics().localLockCount()).isZero();
        } finally {
            othersTurnEnds.countDown();
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    @Test
    void aLiveSemaphoreWaiterBehindMoreDeadClientsThanAReleaseWakesGetsItsPermitSoonAfterTheRelease() throws Exception {
        PermitHandle held = holder.semaphore(key, 1).acquire(LockOptions.waitFor(LONG_WAIT));
        try {
            // more clients than a release wakes registered as waiting for permits, sleeping 5 s before their next
            // look, and then died: their entries outlive them until that look plus a second
            SemaphoreScripts scripts = new SemaphoreScripts(redis, new RedisLockKeys(RedisLockConfig.DEFAULT_KEY_PREFIX));
            int dead = SemaphoreScripts.WAITERS_WOKEN_PER_RELEASE + 1;
            for (int i = 1; i <= dead; i++) {
                String client = "dead-client-" + i;
                assertThat(scripts.acquire(key, client + ":1:1", 1, 30_000, 1, client + ":queue", 5_000, false).acquired())
                        .isFalse();
            }
            Thread.sleep(5); // arrival scores are server ms, and equal scores sort by name: the live client arrives later
            // subscribed before it waits, so it sleeps until its next look (5 s), not the short while of a client
            // whose wake-up subscription is not up yet
            Await.until(live::isListening, Duration.ofSeconds(10), "the live client to subscribe");
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                PermitHandle permit = live.semaphore(key, 1).acquire(LockOptions.waitFor(LONG_WAIT));
                long at = System.nanoTime();
                permit.release();
                return at;
            });
            String semaphoreWaiters = "redis-lock:{" + key + "}:semaphore:waiters";
            Await.until(() -> redis.opsForZSet().size(semaphoreWaiters) == dead + 1, Duration.ofSeconds(5),
                    "the live client registers behind the dead");
            assertThat(redis.opsForZSet().rank(semaphoreWaiters, live.clientId() + ":queue")).isEqualTo((long) dead);
            long releasedAt = System.nanoTime();
            held.release();
            long millis = TimeUnit.NANOSECONDS.toMillis(acquiredAt.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS) - releasedAt);
            System.out.println("live semaphore waiter had its permit " + millis + " ms after the release");
            // before the fix the release woke only the dead, and the live client slept on until its next look, ~5 s
            assertThat(millis).as("ms from the release until the live waiter had its permit").isLessThan(1000);
        } finally {
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    @Test
    void aLiveExclusiveWaiterBehindDeadClientsGetsTheKeySoonAfterAFairReleaseFreesIt() throws Exception {
        LockHandle held = holder.fairLock(key).acquire(LockOptions.waitFor(LONG_WAIT));
        try {
            // more clients than a fair release wakes registered as waiting for the exclusive lock on the key, then died
            int dead = FairLockScripts.EXCLUSIVE_CLIENTS_WOKEN + 1;
            for (int i = 1; i <= dead; i++) {
                String client = "dead-client-" + i;
                new LockScripts(redis, new RedisLockKeys(RedisLockConfig.DEFAULT_KEY_PREFIX), client)
                        .acquire(key, client + ":1:1", 30_000, 5_000, false);
            }
            Thread.sleep(5); // arrival scores are server ms, and equal scores sort by name: the live client arrives later
            Await.until(live::isListening, Duration.ofSeconds(10), "the live client to subscribe");
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                try (LockHandle taken = live.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
                    return System.nanoTime();
                }
            });
            Await.until(() -> waiters().size() == dead + 1, Duration.ofSeconds(5), "the live client registers behind the dead");
            assertThat(waiters().get(dead)).isEqualTo(live.clientId());
            long releasedAt = System.nanoTime();
            held.release();
            long millis = TimeUnit.NANOSECONDS.toMillis(acquiredAt.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS) - releasedAt);
            System.out.println("live exclusive waiter held the key " + millis + " ms after the fair release");
            // before the fix the fair release woke only the dead, and the live client slept on until its next look
            assertThat(millis).as("ms from the fair release until the live exclusive waiter held the key").isLessThan(1000);
        } finally {
            if (held.isHeld()) {
                held.release();
            }
        }
    }

    /** Runs {@code wait} on a thread of its own, and returns once that thread waits (queued on the key's local lock). */
    private static <T> CompletableFuture<T> waiting(Supplier<T> wait, String what) throws InterruptedException {
        Thread[] thread = new Thread[1];
        CompletableFuture<T> result = CompletableFuture.supplyAsync(() -> {
            thread[0] = Thread.currentThread();
            return wait.get();
        });
        Await.until(() -> thread[0] != null && thread[0].getState() == Thread.State.TIMED_WAITING, Duration.ofSeconds(5), what);
        return result;
    }

    /** Takes the key's lock with {@code template}, waiting up to {@link #LONG_WAIT}, and releases it; its fencing token. */
    private long tokenOnceHeld(RedisLockTemplate template) {
        try (LockHandle taken = template.acquire(key, LockOptions.waitFor(LONG_WAIT))) {
            return taken.fencingToken();
        }
    }

    /** A MONITOR line of a PUBLISH, as scripts send wake-ups. */
    private static boolean isPublish(String monitorLine) {
        return monitorLine.toLowerCase(Locale.ROOT).contains("\"publish\"");
    }

    private List<String> waiters() {
        return List.copyOf(redis.opsForZSet().range(waitersKey(), 0, -1));
    }

    private Double expiry(String client) {
        return redis.opsForZSet().score(waitersKey() + ":expiry", client);
    }

    private String waitersKey() {
        return "redis-lock:{" + key + "}:waiters";
    }
}
