package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.SessionCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/** The fair lock against a real redis-server: FIFO by arrival, hand-over in the release, dead waiters skipped. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class FairLockTest {

    private static final LockOptions THIRTY_SECONDS = LockOptions.waitFor(Duration.ofSeconds(30));

    static RedisServerProcess server;
    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static RedisLockTemplate third;
    static StringRedisTemplate redis;

    @PerTest
    String key;
    @PerTest
    ExecutorService pool;

    @Test
    void threadsOfThreeClientsGetTheLockInTheOrderTheirRequestsReachedRedisAndNeverOverlap() throws Exception {
        List<RedisLockTemplate> templates = List.of(first, second, third);
        String counter = "counter:" + key;
        redis.opsForValue().set(counter, "0");
        int waiters = 12;
        int rounds = 5;
        Random random = new Random(42);
        List<Integer> acquired = Collections.synchronizedList(new ArrayList<>());
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<long[]> sections = Collections.synchronizedList(new ArrayList<>());
        List<Integer> arrivals = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            LockHandle gate = first.fairLock(key).acquire(LockOptions.tryOnce());
            tokens.add(gate.fencingToken());
            List<Integer> roundArrivals = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                roundArrivals.add(i);
            }
            Collections.shuffle(roundArrivals, random);
            List<Future<?>> futures = new ArrayList<>();
            for (int n = 0; n < waiters; n++) {
                int waiter = roundArrivals.get(n);
                RedisLockTemplate template = templates.get(waiter % templates.size());
                futures.add(pool.submit(() -> {
                    try (LockHandle handle = template.fairLock(key).acquire(THIRTY_SECONDS)) {
                        long enter = System.nanoTime();
                        acquired.add(waiter);
                        tokens.add(handle.fencingToken());
                        long value = Long.parseLong(redis.opsForValue().get(counter));
                        Thread.sleep(2); // widen the window a second holder would need
                        redis.opsForValue().set(counter, Long.toString(value + 1));
                        sections.add(new long[] {enter, System.nanoTime()});
                    }
                    return null;
                }));
                awaitQueueLength(n + 1);
            }
            arrivals.addAll(roundArrivals);
            gate.release();
            for (Future<?> future : futures) {
                future.get(30, TimeUnit.SECONDS);
            }
        }
        assertThat(acquired).hasSize(waiters * rounds).isEqualTo(arrivals);
        assertThat(redis.opsForValue().get(counter)).isEqualTo(Integer.toString(waiters * rounds));
        assertNoOverlap(sections);
        assertStrictlyIncreasing(tokens);
    }

    @Test
    void aReleaseHandsTheLockToTheNextWaiterItselfWithTheNextFencingToken() throws Exception {
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        CountDownLatch done = new CountDownLatch(1);
        Future<Long> waiter = pool.submit(() -> {
            try (LockHandle handle = second.fairLock(key).acquire(THIRTY_SECONDS)) {
                done.await(10, TimeUnit.SECONDS);
                return handle.fencingToken();
            }
        });
        awaitQueueLength(1);
        held.release();
        // read at once: no waiter could have polled in between, the release script itself set the next owner
        String owner = redis.opsForValue().get("redis-lock:{" + key + "}");
        long handedOverToken = Long.parseLong(redis.opsForValue().get("redis-lock:{" + key + "}:fence"));
        assertThat(owner).startsWith(second.clientId() + ":");
        done.countDown();
        assertThat(waiter.get(1, TimeUnit.SECONDS)).isEqualTo(handedOverToken).isGreaterThan(held.fencingToken());
        assertThat(redis.keys("redis-lock:{" + key + "}*")).doesNotContain("redis-lock:{" + key + "}");
    }

    @Test
    void theNextWaiterHoldsTheLockStraightFromTheHandOverMessageAndConfirmsItInTheBackground() throws Exception {
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        CountDownLatch done = new CountDownLatch(1);
        Future<LockHandle> waiter = pool.submit(() -> {
            LockHandle handle = second.fairLock(key).acquire(THIRTY_SECONDS);
            try {
                done.await(10, TimeUnit.SECONDS);
                assertThat(handle.isHeld()).as("held past the hand-over's own lease").isTrue();
                return handle;
            } finally {
                handle.release();
            }
        });
        awaitQueueLength(1);
        awaitSubscription(second);
        String fairAcquire = "\"" + FairLockScripts.FAIR_ACQUIRE.getSha1() + "\"";
        String fairRelease = "\"" + FairLockScripts.FAIR_RELEASE.getSha1() + "\"";
        Predicate<String> waitersRequest = line -> line.contains(fairAcquire)
                && line.contains(second.clientId()) && line.contains("\"1\"");
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            // release just after one of the waiter's refreshes (every REFRESH_MILLIS), so that its next one cannot
            // reach Redis between the hand-over and its message and take the lock by asking, with nothing to confirm
            monitor.awaitCount(waitersRequest, 1, Duration.ofSeconds(2), "refreshes by the waiter");
            held.release();
            Predicate<String> waitersConfirmation = confirmationBy(second);
            monitor.awaitCount(waitersConfirmation, 1, Duration.ofSeconds(5), "confirmations by the waiter");
            assertThat(monitor.countAfterLast(line -> line.contains(fairRelease) && !line.contains("lua"), waitersRequest))
                    .as("requests of the waiter for the lock after the release").isZero();
            assertThat(redis.getExpire("redis-lock:{" + key + "}", TimeUnit.MILLISECONDS))
                    .as("the lease once confirmed").isGreaterThan(FairLockScripts.GRANT_MILLIS);
        }
        Thread.sleep(FairLockScripts.GRANT_MILLIS);
        done.countDown();
        LockHandle taken = waiter.get(5, TimeUnit.SECONDS);
        assertThat(taken.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(redis.hasKey("redis-lock:{" + key + "}")).isFalse();
    }

    @Test
    void handOversInQuickSuccessionShareOneConfirmationSweepAndEachStillHeldIsConfirmedInTime() throws Exception {
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        long[] firstHeldNanos = new long[1];
        Future<?> brief = pool.submit(() -> {
            LockHandle handle = second.fairLock(key).acquire(THIRTY_SECONDS);
            long acquiredAt = System.nanoTime();
            Thread.sleep(10); // releases before the confirmation sweep its grant scheduled comes round
            handle.release();
            firstHeldNanos[0] = System.nanoTime() - acquiredAt;
            return null;
        });
        awaitQueueLength(1);
        Future<Boolean> lasting = pool.submit(() -> {
            try (LockHandle handle = second.fairLock(key).acquire(THIRTY_SECONDS)) {
                Thread.sleep(2 * FairLockScripts.GRANT_MILLIS); // well past the hand-over's own lease
                return handle.isHeld();
            }
        });
        awaitQueueLength(2);
        awaitSubscription(second);
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            held.release();
            brief.get(5, TimeUnit.SECONDS);
            Thread.sleep(FairLockScripts.GRANT_MILLIS / 2 + 100); // past the latest moment the second's confirmation is due
            assertThat(redis.getExpire("redis-lock:{" + key + "}", TimeUnit.MILLISECONDS))
                    .as("the second holder's lease once confirmed").isGreaterThan(FairLockScripts.GRANT_MILLIS);
            assertThat(lasting.get(5, TimeUnit.SECONDS)).as("the second holder held past its hand-over's lease").isTrue();
            assumeTrue(firstHeldNanos[0] < TimeUnit.MILLISECONDS.toNanos(FairLockScripts.CONFIRM_AFTER_MILLIS / 2),
                    "the first holder released well before the sweep (held " + firstHeldNanos[0] / 1000 + " µs)");
            assertThat(monitor.count(confirmationBy(second))).as("confirmations: the second holder's only").isEqualTo(1);
        }
    }

    @Test
    void aHolderThatReleasesBeforeItsConfirmationIsDueNeverSendsOne() throws Exception {
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        Lock lock = second.fairLock(key);
        long[] heldNanos = new long[1];
        Future<?> waiter = pool.submit(() -> {
            lock.lock();
            long acquiredAt = System.nanoTime();
            Thread.sleep(20); // long enough for a confirmation sent at once to be on its way
            lock.unlock();
            heldNanos[0] = System.nanoTime() - acquiredAt;
            return null;
        });
        awaitQueueLength(1);
        awaitSubscription(second);
        try (RedisMonitor monitor = new RedisMonitor(server)) {
            held.release();
            waiter.get(5, TimeUnit.SECONDS);
            Thread.sleep(FairLockScripts.GRANT_MILLIS); // past the latest moment a confirmation could be due
            assumeTrue(heldNanos[0] < TimeUnit.MILLISECONDS.toNanos(FairLockScripts.CONFIRM_AFTER_MILLIS / 2),
                    "the waiter released well before its confirmation was due (held " + heldNanos[0] / 1000 + " µs)");
            assertThat(monitor.count(confirmationBy(second))).as("confirmations by the waiter").isZero();
        }
        assertThat(redis.keys("redis-lock:{" + key + "}*")).doesNotContain("redis-lock:{" + key + "}",
                "redis-lock:{" + key + "}:queue");
    }

    @Test
    void threeDeadWaitersAndOneThatGaveUpCostTheNextLiveWaiterWellUnderASecond() throws Exception {
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        RedisClients doomed = new RedisClients(server);
        for (int i = 0; i < 3; i++) {
            RedisLockTemplate dying = doomed.lockTemplate();
            pool.submit(() -> dying.fairLock(key).tryAcquire(LockOptions.waitFor(Duration.ofSeconds(3))));
            awaitQueueLength(i + 1);
        }
        Future<Optional<LockHandle>> gaveUp = pool.submit(() -> second.fairLock(key).tryAcquire(LockOptions.waitFor(Duration.ofMillis(300))));
        awaitQueueLength(4);
        long[] acquiredAt = new long[1];
        Future<?> live = pool.submit(() -> {
            try (LockHandle handle = third.fairLock(key).acquire(THIRTY_SECONDS)) {
                acquiredAt[0] = System.nanoTime();
            }
            return null;
        });
        awaitQueueLength(5);
        assertThat(gaveUp.get(5, TimeUnit.SECONDS)).isEmpty();
        doomed.close(); // templates and connections gone at once: their waiting threads can no longer reach Redis
        long releasedAt = System.nanoTime();
        held.release();
        live.get(5, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - releasedAt)).isLessThan(1000);
    }

    @Test
    void theHolderThreadTakesTheFairLockAgainAndKeepsItUntilItsLastUnlock() throws Exception {
        Lock lock = first.fairLock(key);
        Lock other = second.fairLock(key);
        lock.lock();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        assertThat(other.tryLock()).isFalse();
        assertThatThrownBy(() -> pool.submit(lock::unlock).get()).hasCauseInstanceOf(IllegalMonitorStateException.class);
        lock.unlock();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void aFairLockAndTheExclusiveLockOfTheSameKeyExcludeEachOther() throws Exception {
        try (LockHandle fair = first.fairLock(key).acquire(LockOptions.tryOnce())) {
            assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        }
        try (LockHandle exclusive = first.acquire(key, LockOptions.tryOnce())) {
            assertThat(second.fairLock(key).tryAcquire(LockOptions.tryOnce())).isEmpty();
        }
    }

    @Test
    void aFairReleaseWakesAClientWaitingForTheExclusiveLockOfTheSameKey() throws Exception {
        LockHandle fair = first.fairLock(key).acquire(LockOptions.tryOnce());
        long[] acquiredAt = new long[1];
        Future<?> exclusive = pool.submit(() -> {
            try (LockHandle handle = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(20)))) {
                acquiredAt[0] = System.nanoTime();
            }
            return null;
        });
        // registered as a waiter and subscribed: it sleeps for a release notice, re-checking on its own only after 5 s
        awaitUntil(() -> redis.opsForZSet().score("redis-lock:{" + key + "}:waiters", second.clientId()) != null ? 1 : 0,
                "the exclusive waiter's registration");
        awaitSubscription(second);
        long releasedAt = System.nanoTime();
        fair.release();
        exclusive.get(20, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - releasedAt)).as("ms from the fair release").isLessThan(2500);
    }

    @Test
    void theWatchdogKeepsAFairLockPastItsLeaseAndACrashedHoldersLeaseFreesIt() throws Exception {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofSeconds(1)));
        try (LockHandle renewed = shortLease.fairLock(key).acquire(LockOptions.tryOnce())) {
            Thread.sleep(2500);
            assertThat(renewed.isHeld()).isTrue();
            assertThat(second.fairLock(key).tryAcquire(LockOptions.tryOnce())).isEmpty();
        }
        RedisClients crashing = new RedisClients(server);
        crashing.lockTemplate().fairLock(key).acquire(LockOptions.tryOnce().withLease(Duration.ofMillis(500)));
        crashing.close(); // never released
        try (LockHandle next = second.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(5)))) {
            assertThat(next.isHeld()).isTrue();
        }
    }

    /**
     * The hand-over is taken by another owner in the same transaction as the release that made it, before the
     * waiter's confirmation can reach Redis: the waiter holds the lock from the message, and its confirmation finds
     * it gone. That loss is told to the listeners as the watchdog tells every other, once.
     */
    @Test
    void aHandOverGoneBeforeItsConfirmationIsToldToTheListenersOnceAndAtTheRelease() throws Exception {
        String lockKey = "redis-lock:{" + key + "}";
        RedisLockTemplate handingOver = clients.lockTemplate(new RedisLockTemplate(
                new ReleaseThenSet(redis, lockKey, "another-owner"), RedisLockConfig.defaults()));
        RedisLockTemplate waiting = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofSeconds(1)));
        List<String> told = Collections.synchronizedList(new ArrayList<>());
        waiting.addLockLostListener((lock, reason) -> told.add(lock.key() + " " + lock.fencingToken() + ": " + reason));

        LockHandle held = handingOver.fairLock(key).acquire(LockOptions.tryOnce());
        CountDownLatch toldOnce = new CountDownLatch(1);
        Future<long[]> waiter = pool.submit(() -> {
            LockHandle handle = waiting.fairLock(key).acquire(THIRTY_SECONDS);
            toldOnce.await(10, TimeUnit.SECONDS);
            boolean heldAfterLoss = handle.isHeld();
            assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class).hasMessageContaining(key)
                    .hasMessageContaining("before it was confirmed");
            return new long[] {handle.fencingToken(), heldAfterLoss ? 1 : 0};
        });
        awaitQueueLength(1);
        awaitSubscription(waiting);
        held.release();
        long handedOverToken = Long.parseLong(redis.opsForValue().get(lockKey + ":fence"));

        awaitUntil(told::size, "the listeners told of the loss");
        Thread.sleep(1000); // a lease of the waiter's watchdog: six of its checks, none of which may tell it again
        toldOnce.countDown();
        long[] taken = waiter.get(5, TimeUnit.SECONDS);
        assertThat(taken[0]).as("the waiter's fencing token").isEqualTo(handedOverToken).isGreaterThan(held.fencingToken());
        assertThat(taken[1]).as("whether the waiter's handle was held once the listeners were told").isZero();
        assertThat(told).singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .startsWith(key + " " + handedOverToken + ": ").contains("before it was confirmed");
        assertThat(redis.opsForValue().get(lockKey)).as("the other owner's lock, untouched").isEqualTo("another-owner");
        redis.delete(lockKey);
    }

    /**
     * A template whose fair release sets the lock it handed over to another owner in the same MULTI, so no
     * confirmation of the hand-over can run between the two.
     */
    private static final class ReleaseThenSet extends StringRedisTemplate {

        private final String lockKey;
        private final String otherOwner;

        ReleaseThenSet(StringRedisTemplate redis, String lockKey, String otherOwner) {
            super(redis.getRequiredConnectionFactory());
            this.lockKey = lockKey;
            this.otherOwner = otherOwner;
            // EVALSHA inside MULTI cannot fall back to EVAL, so the script is loaded first
            redis.execute((RedisCallback<String>) connection -> connection.scriptingCommands()
                    .scriptLoad(FairLockScripts.FAIR_RELEASE.getScriptAsString().getBytes(StandardCharsets.UTF_8)));
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T execute(RedisScript<T> script, List<String> keys, Object... args) {
            if (script != FairLockScripts.FAIR_RELEASE) {
                return super.execute(script, keys, args);
            }
            List<Object> replies = execute(new SessionCallback<List<Object>>() {
                @Override
                @SuppressWarnings({"rawtypes", "unchecked"})
                public List<Object> execute(RedisOperations operations) {
                    operations.multi();
                    runScript(script, keys, args);
                    operations.opsForValue().set(lockKey, otherOwner, Duration.ofSeconds(30));
                    return operations.exec();
                }
            });
            return (T) replies.get(0);
        }

        private <T> T runScript(RedisScript<T> script, List<String> keys, Object... args) {
            return super.execute(script, keys, args);
        }
    }

    @Test
    void tryLockDoesNotOvertakeAQueuedWaiterAndAWaiterThatTimesOutLeavesNoEntry() throws Exception {
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        Future<?> waiter = pool.submit(() -> {
            second.fairLock(key).acquire(THIRTY_SECONDS).release();
            return null;
        });
        awaitQueueLength(1);
        assertThat(third.fairLock(key).tryAcquire(LockOptions.waitFor(Duration.ofMillis(200)))).isEmpty();
        assertThat(queueLength()).isEqualTo(1);
        held.release();
        waiter.get(5, TimeUnit.SECONDS);
        assertThat(third.fairLock(key).tryLock()).isTrue();
        third.fairLock(key).unlock();
        assertThat(redis.hasKey("redis-lock:{" + key + "}")).isFalse();
    }

    private long queueLength() {
        Long size = redis.opsForZSet().zCard("redis-lock:{" + key + "}:queue");
        return size == null ? 0 : size;
    }

    /** A MONITOR line of a fair-lock confirmation (the acquire script in its "confirm" mode) sent by {@code template}. */
    private static Predicate<String> confirmationBy(RedisLockTemplate template) {
        String fairAcquire = "\"" + FairLockScripts.FAIR_ACQUIRE.getSha1() + "\"";
        return line -> line.contains(fairAcquire) && line.contains(template.clientId()) && line.contains("\"confirm\"");
    }

    private void awaitQueueLength(long expected) throws InterruptedException {
        awaitUntil(() -> queueLength() == expected ? 1 : 0, "queue length " + expected);
    }

    /** Waits until {@code client}'s waiter sleeps on its subscription, so a release wakes it by message. */
    private static void awaitSubscription(RedisLockTemplate client) throws InterruptedException {
        String channel = "redis-lock:wake:" + client.clientId();
        awaitUntil(() -> {
            List<String> reply = server.command("PUBSUB", "NUMSUB", channel).lines().toList();
            return Long.parseLong(reply.get(reply.size() - 1).trim());
        }, "the waiter's subscription");
        Thread.sleep(300); // woken once the subscription is up, it looked again and went back to sleep
    }

    private static void awaitUntil(LongSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (condition.getAsLong() == 0) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(2);
        }
    }

    static void assertNoOverlap(List<long[]> sections) {
        List<long[]> sorted = new ArrayList<>(sections);
        sorted.sort(Comparator.comparingLong(s -> s[0]));
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i)[0]).as("section %d entered before section %d exited", i, i - 1)
                    .isGreaterThan(sorted.get(i - 1)[1]);
        }
    }

    static void assertStrictlyIncreasing(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d", i).isGreaterThan(tokens.get(i - 1));
        }
    }
}
