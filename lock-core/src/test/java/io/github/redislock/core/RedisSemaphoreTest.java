package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import io.github.redislock.test.Concurrently;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The semaphore against a real redis-server: at most N holders, leases, run-time limits, waiting, tokens, reentrancy. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class RedisSemaphoreTest {

    private static final LockOptions WAIT_30S = LockOptions.waitFor(Duration.ofSeconds(30));

    static RedisServerProcess server;
    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    @PerTest
    String key;

    /**
     * Runs {@code threads} threads that each take a permit of {@code semaphoreOf} their thread number {@code rounds}
     * times and hold it {@code holdMillis}, recording each holding in {@code intervals}.
     */
    private static void holdPermits(int threads, int rounds, long holdMillis, IntFunction<RedisSemaphore> semaphoreOf,
            List<Interval> intervals) {
        Concurrently.run(threads, rounds, thread -> {
            try (PermitHandle permit = semaphoreOf.apply(thread).acquire(WAIT_30S)) {
                long enter = System.nanoTime();
                Thread.sleep(holdMillis);
                intervals.add(new Interval(enter, System.nanoTime()));
            }
        });
    }

    /**
     * Many threads of one client cycling on few permits (the benchmark's S9): each release hands its permit to the next
     * queued thread, threads arrive and become first in line while releases run. Once every thread has released, no
     * permit may stay held in Redis: a permit left there under an acquisition no thread holds is lost to every client
     * until its lease ends (30 s with the watchdog).
     */
    @Test
    void manyThreadsCyclingOnFewPermitsLeaveNoPermitHeldOnceAllReleased() {
        RedisSemaphore[] semaphores = new RedisSemaphore[16];
        for (int t = 0; t < semaphores.length; t++) {
            semaphores[t] = first.semaphore(key, 4);
        }
        for (int attempt = 0; attempt < 5; attempt++) {
            Concurrently.run(16, 300, thread -> {
                try (PermitHandle permit = semaphores[thread].acquire(WAIT_30S)) {
                    assertThat(permit.isHeld()).isTrue();
                }
            });
            assertThat(redis.opsForZSet().range("redis-lock:{" + key + "}:semaphore:holders", 0, -1))
                    .as("permits held in Redis after every thread released (attempt %d)", attempt).isEmpty();
            assertThat(first.semaphore(key, 4).availablePermits()).isEqualTo(4);
        }
    }

    @Test
    void twelveThreadsOverThreeClientsNeverHoldMoreThanThreePermitsAtOnceAndReachThree() throws Exception {
        RedisLockTemplate third = clients.lockTemplate();
        List<RedisLockTemplate> templates = List.of(first, second, third);
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        int threads = 12;
        int rounds = 10;
        List<RedisSemaphore> semaphores = templates.stream().map(template -> template.semaphore(key, 3)).toList();
        // 5 ms: widen the window a fourth holder would need
        holdPermits(threads, rounds, 5, thread -> semaphores.get(thread % semaphores.size()), intervals);
        assertThat(intervals).hasSize(threads * rounds);
        assertThat(Intervals.maxConcurrency(intervals)).isEqualTo(3);
        assertThat(first.semaphore(key, 3).availablePermits()).isEqualTo(3);
    }

    @Test
    void threadsOfOneClientWaitingForPermitsTakeTurnsInsteadOfAllAskingRedisAtEachRelease() throws Exception {
        RedisSemaphore semaphore = first.semaphore(key, 1);
        int threads = 8;
        int rounds = 5;
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        long scriptsBefore = scriptCalls();
        // 2 ms: the next thread finds the permit taken and waits for this release
        holdPermits(threads, rounds, 2, thread -> semaphore, intervals);
        double perAcquisition = (scriptCalls() - scriptsBefore) / (double) (threads * rounds);
        assertThat(Intervals.maxConcurrency(intervals)).isEqualTo(1);
        // taking turns: a failed try, the try the release wakes, the release (3); woken all at once, the 7 waiting
        // threads would each try at every release (about 8)
        assertThat(perAcquisition).isLessThan(4.5);
    }

    @Test
    void aReleaseHandsItsPermitsToTheNextWaitingThreadOfItsClientInTheSameScriptCall() throws Exception {
        RedisSemaphore semaphore = first.semaphore(key, 2);
        int threads = 8;
        int rounds = 10;
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        long scriptsBefore = scriptCalls();
        // 2 ms: threads queue behind the two holders
        holdPermits(threads, rounds, 2, thread -> semaphore, intervals);
        double perAcquisition = (scriptCalls() - scriptsBefore) / (double) (threads * rounds);
        assertThat(Intervals.maxConcurrency(intervals)).isEqualTo(2);
        // handed over: the release is the next holder's acquisition (about 1 call per cycle); without the
        // hand-over each cycle costs its acquisition and its release, plus the failed tries of the queue's head (2-3)
        assertThat(perAcquisition).isLessThan(1.5);
        assertThat(semaphore.availablePermits()).isEqualTo(2);
    }

    @Test
    void hundredsOfHandOversBetweenTwoClientsNeverExceedThePermitsAndTheOtherClientGetsItsTurns() throws Exception {
        RedisSemaphore mine = first.semaphore(key, 3);
        RedisSemaphore theirs = second.semaphore(key, 3);
        int busyThreads = 8;
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(busyThreads + 2);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Future<?>> busy = new ArrayList<>();
        for (int t = 0; t < busyThreads; t++) {
            busy.add(pool.submit(() -> {
                while (!stop.get()) {
                    try (PermitHandle permit = mine.acquire(WAIT_30S)) {
                        long enter = System.nanoTime();
                        Thread.sleep(1);
                        intervals.add(new Interval(enter, System.nanoTime()));
                    }
                }
                return null;
            }));
        }
        // the other client's threads wait for permits while the first client's threads keep handing them over
        List<Future<?>> remote = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            remote.add(pool.submit(() -> {
                for (int i = 0; i < 20; i++) {
                    try (PermitHandle permit = theirs.acquire(WAIT_30S)) {
                        long enter = System.nanoTime();
                        Thread.sleep(1);
                        intervals.add(new Interval(enter, System.nanoTime()));
                    }
                }
                return null;
            }));
        }
        try {
            for (Future<?> future : remote) {
                future.get(1, TimeUnit.MINUTES); // starved, it would run into its 30 s wait time and fail
            }
        } finally {
            stop.set(true);
            for (Future<?> future : busy) {
                future.get(1, TimeUnit.MINUTES);
            }
            pool.shutdown();
        }
        assertThat(Intervals.maxConcurrency(intervals)).isEqualTo(3);
        assertThat(mine.availablePermits()).isEqualTo(3);
    }

    /** EVAL and EVALSHA calls the server has run so far. */
    private static long scriptCalls() {
        return server.command("INFO", "commandstats").lines()
                .filter(line -> line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .sum();
    }

    @Test
    void holdersAskingForSeveralPermitsNeverExceedTheLimitTogether() throws Exception {
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        List<Integer> permitsOf = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            int wanted = 1 + t % 3;
            RedisSemaphore semaphore = (t % 2 == 0 ? first : second).semaphore(key, 4);
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 8; i++) {
                    try (PermitHandle permit = semaphore.acquire(wanted, WAIT_30S)) {
                        long enter = System.nanoTime();
                        Thread.sleep(5);
                        synchronized (intervals) {
                            intervals.add(new Interval(enter, System.nanoTime()));
                            permitsOf.add(permit.permits());
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> future : futures) {
            future.get(2, TimeUnit.MINUTES);
        }
        pool.shutdown();
        // the permits held at any instant, by weighting each interval with its permits
        List<long[]> events = new ArrayList<>();
        for (int i = 0; i < intervals.size(); i++) {
            events.add(new long[] {intervals.get(i).enter(), permitsOf.get(i)});
            events.add(new long[] {intervals.get(i).exit(), -permitsOf.get(i)});
        }
        events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        int current = 0;
        int max = 0;
        for (long[] event : events) {
            current += (int) event[1];
            max = Math.max(max, current);
        }
        assertThat(max).isLessThanOrEqualTo(4).isGreaterThanOrEqualTo(3);
    }

    @Test
    void tryAcquireReturnsEmptyAtOnceWhenNoPermitsAreFree() {
        RedisSemaphore semaphore = first.semaphore(key, 2);
        try (PermitHandle both = semaphore.acquire(2, LockOptions.tryOnce())) {
            assertThat(both.permits()).isEqualTo(2);
            long start = System.nanoTime();
            assertThat(second.semaphore(key, 2).tryAcquire(LockOptions.tryOnce())).isEmpty();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);
            assertThat(semaphore.availablePermits()).isZero();
            assertThatThrownBy(() -> second.semaphore(key, 2).acquire(LockOptions.waitFor(Duration.ofMillis(100))))
                    .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("'" + key + "'");
        }
        assertThat(second.semaphore(key, 2).availablePermits()).isEqualTo(2);
    }

    @Test
    void aWaiterIsWokenByAReleaseNotByItsNextRecheck() throws Exception {
        PermitHandle held = first.semaphore(key, 1).acquire(LockOptions.tryOnce());
        long[] acquiredAt = new long[1];
        long[] token = new long[1];
        CountDownLatch waiting = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            waiting.countDown();
            try (PermitHandle permit = second.semaphore(key, 1).acquire(WAIT_30S)) {
                acquiredAt[0] = System.nanoTime();
                token[0] = permit.fencingToken();
            }
        });
        waiter.start();
        waiting.await();
        Thread.sleep(300);
        long releasedAt = System.nanoTime();
        held.release();
        waiter.join(30_000);
        assertThat(acquiredAt[0]).as("the waiter got the permit").isPositive();
        // without a wake-up it would look again only after 5 s (the longest sleep), the holder's lease being 30 s
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - releasedAt)).isLessThan(2000);
        assertThat(token[0]).isGreaterThan(held.fencingToken());
    }

    @Test
    void aCrashedHoldersPermitsComeBackWhenItsLeaseEndsWhileOthersHoldTheirs() throws Exception {
        Duration lease = Duration.ofSeconds(1);
        // a live holder with the 30 s watchdog lease keeps the semaphore's keys alive: the crashed holder's
        // permits must come back by its own lease, not because the keys expire
        PermitHandle live = first.semaphore(key, 3).acquire(1, LockOptions.tryOnce());
        RedisLockTemplate crashing = new RedisLockTemplate(clients.redisTemplate(),
                RedisLockConfig.defaults().withWatchdogLease(lease));
        PermitHandle lost = crashing.semaphore(key, 3).acquire(2, LockOptions.tryOnce());
        crashing.close(); // its watchdog stops and nobody releases: as if its JVM died
        RedisSemaphore semaphore = second.semaphore(key, 3);
        assertThat(semaphore.tryAcquire(LockOptions.tryOnce())).as("still within the lease").isEmpty();
        long start = System.nanoTime();
        try (PermitHandle permits = semaphore.acquire(2, LockOptions.waitFor(Duration.ofSeconds(10)))) {
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(waitedMs).as("back when the 1 s lease ended").isLessThan(3000);
            assertThat(permits.fencingToken()).isGreaterThan(lost.fencingToken());
            assertThat(live.isHeld()).isTrue();
        }
        live.release();
    }

    @Test
    void theWatchdogKeepsPermitsBeyondTheirLease() throws Exception {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(600)));
        RedisSemaphore semaphore = shortLease.semaphore(key, 1);
        try (PermitHandle permit = semaphore.acquire(LockOptions.tryOnce())) {
            Thread.sleep(2000); // more than three leases
            assertThat(permit.isHeld()).isTrue();
            assertThat(second.semaphore(key, 1).tryAcquire(LockOptions.tryOnce())).isEmpty();
        } // and the release finds them still this holder's: no LockLostException
        assertThat(second.semaphore(key, 1).availablePermits()).isEqualTo(1);
    }

    @Test
    void aFixedLeaseIsNotRenewedAndItsReleaseSaysThePermitsWereLost() throws Exception {
        RedisSemaphore semaphore = first.semaphore(key, 1);
        PermitHandle permit = semaphore.acquire(LockOptions.tryOnce().withLease(Duration.ofMillis(300)));
        Thread.sleep(600);
        assertThat(permit.isHeld()).isFalse();
        try (PermitHandle next = second.semaphore(key, 1).acquire(LockOptions.tryOnce())) {
            assertThat(next.fencingToken()).isGreaterThan(permit.fencingToken());
        }
        assertThatThrownBy(permit::release).isInstanceOf(LockLostException.class).hasMessageContaining(key);
    }

    @Test
    void raisingAndLoweringThePermitsWhileSomeAreHeldLosesNone() throws Exception {
        RedisSemaphore semaphore = first.semaphore(key, 3);
        // this thread holds through first and second; third asks (a thread asking where it holds shares its permits)
        RedisSemaphore asking = clients.lockTemplate().semaphore(key, 3);
        PermitHandle two = semaphore.acquire(2, LockOptions.tryOnce());
        PermitHandle one = second.semaphore(key, 3).acquire(1, LockOptions.tryOnce());
        assertThat(semaphore.availablePermits()).isZero();

        semaphore.setPermits(1); // below what is held: nobody is admitted until enough come back
        assertThat(semaphore.availablePermits()).isZero();
        assertThat(asking.tryAcquire(LockOptions.tryOnce())).as("the limit is Redis's, not the 3 asked").isEmpty();
        one.release(); // still its own: no LockLostException
        assertThat(semaphore.availablePermits()).as("2 held, limit 1").isZero();
        assertThat(asking.tryAcquire(LockOptions.tryOnce())).isEmpty();

        semaphore.setPermits(5);
        assertThat(semaphore.availablePermits()).isEqualTo(3);
        try (PermitHandle three = asking.acquire(3, LockOptions.tryOnce())) {
            assertThat(second.semaphore(key, 3).tryAcquire(LockOptions.tryOnce())).isEmpty();
            assertThat(two.isHeld()).isTrue();
        }
        two.release();
        assertThat(semaphore.availablePermits()).isEqualTo(5);
    }

    @Test
    void raisingThePermitsWakesAWaiter() throws Exception {
        RedisSemaphore semaphore = first.semaphore(key, 1);
        PermitHandle held = semaphore.acquire(LockOptions.tryOnce());
        long[] acquiredAt = new long[1];
        Thread waiter = new Thread(() -> {
            try (PermitHandle permit = second.semaphore(key, 1).acquire(WAIT_30S)) {
                acquiredAt[0] = System.nanoTime();
            }
        });
        waiter.start();
        Thread.sleep(300);
        long raisedAt = System.nanoTime();
        semaphore.setPermits(2);
        waiter.join(30_000);
        held.release();
        assertThat(acquiredAt[0]).isPositive();
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - raisedAt)).isLessThan(2000);
    }

    @Test
    void fencingTokensRiseWithEveryAcquisitionAlsoWhileOthersHoldPermits() {
        RedisSemaphore semaphore = first.semaphore(key, 3);
        PermitHandle a = semaphore.acquire(LockOptions.tryOnce());
        PermitHandle b = second.semaphore(key, 3).acquire(LockOptions.tryOnce());
        a.release();
        PermitHandle c = semaphore.acquire(LockOptions.tryOnce());
        assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
        assertThat(c.fencingToken()).isGreaterThan(b.fencingToken());
        b.release();
        c.release();
    }

    @Test
    void aThreadAcquiringAgainSharesItsPermitsAndMayNotAskForMore() {
        RedisSemaphore semaphore = first.semaphore(key, 3);
        PermitHandle outer = semaphore.acquire(2, LockOptions.tryOnce());
        PermitHandle inner = semaphore.acquire(1, LockOptions.tryOnce());
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(semaphore.availablePermits()).as("the nested acquisition took none").isEqualTo(1);
        assertThatThrownBy(() -> semaphore.acquire(3, LockOptions.tryOnce()))
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("holds 2 permit(s)");
        inner.release();
        assertThat(outer.isHeld()).isTrue();
        assertThat(semaphore.availablePermits()).isEqualTo(1);
        outer.release();
        assertThat(semaphore.availablePermits()).isEqualTo(3);
    }

    @Test
    void onlyTheAcquiringThreadMayReleaseAndOnlyOnce() throws Exception {
        PermitHandle permit = first.semaphore(key, 1).acquire(LockOptions.tryOnce());
        Throwable[] failure = new Throwable[1];
        Thread other = new Thread(() -> {
            try {
                permit.release();
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        other.start();
        other.join();
        assertThat(failure[0]).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(first.semaphore(key, 1).availablePermits()).isZero();
        permit.release();
        assertThatThrownBy(permit::release).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void everySemaphoreKeyKeepsATimeToLiveWhenAReleaseHandsItsPermitsOverWhileMoreThreadsWait() throws Exception {
        RedisSemaphore semaphore = first.semaphore(key, 1);
        PermitHandle held = semaphore.acquire(LockOptions.tryOnce());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CountDownLatch handedOver = new CountDownLatch(1);
        CountDownLatch checked = new CountDownLatch(1);
        try {
            // two threads of the same client wait: the release hands the permit to the first, and the client waits on
            // (its waiter entry re-added); the releasing holder was the only one, so the holder keys are written anew
            List<Future<?>> waiters = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                waiters.add(pool.submit(() -> {
                    try (PermitHandle permit = semaphore.acquire(WAIT_30S)) {
                        handedOver.countDown();
                        checked.await(10, TimeUnit.SECONDS);
                    }
                    return null;
                }));
                Thread.sleep(100); // queued in turn
            }
            held.release();
            assertThat(handedOver.await(5, TimeUnit.SECONDS)).isTrue();
            List<String> names = new ArrayList<>(redis.keys("redis-lock:{" + key + "}*"));
            assertThat(names).contains("redis-lock:{" + key + "}:semaphore:holders", "redis-lock:{" + key + "}:semaphore:permits",
                    "redis-lock:{" + key + "}:semaphore:waiters", "redis-lock:{" + key + "}:semaphore:waiters:expiry");
            for (String name : names) {
                assertThat(redis.getExpire(name, TimeUnit.MILLISECONDS)).as(name).isPositive();
            }
            checked.countDown();
            for (Future<?> waiter : waiters) {
                waiter.get(10, TimeUnit.SECONDS);
            }
        } finally {
            checked.countDown();
            pool.shutdownNow();
        }
        assertThat(redis.keys("redis-lock:{" + key + "}:semaphore:holders")).isEmpty();
    }

    @Test
    void everySemaphoreKeyHasATimeToLiveAndSharesTheLocksHashTag() {
        RedisSemaphore semaphore = first.semaphore(key, 2);
        Thread waiter;
        try (PermitHandle both = semaphore.acquire(2, LockOptions.tryOnce())) {
            waiter = new Thread(() -> second.semaphore(key, 2).tryAcquire(LockOptions.waitFor(Duration.ofMillis(500))));
            waiter.start();
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            List<String> names = new ArrayList<>(redis.keys("redis-lock:{" + key + "}*"));
            assertThat(names).contains("redis-lock:{" + key + "}:semaphore:holders", "redis-lock:{" + key + "}:semaphore:permits",
                    "redis-lock:{" + key + "}:semaphore:limit", "redis-lock:{" + key + "}:semaphore:fence",
                    "redis-lock:{" + key + "}:semaphore:waiters", "redis-lock:{" + key + "}:semaphore:waiters:expiry");
            for (String name : names) {
                assertThat(redis.getExpire(name, TimeUnit.MILLISECONDS)).as(name).isPositive();
            }
        }
        try {
            waiter.join(5000);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void permitsTheWatchdogFindsGoneAreReportedLostToListenersAndAtRelease() throws Exception {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(600)));
        List<String> told = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch lost = new CountDownLatch(1);
        shortLease.addLockLostListener((lock, reason) -> {
            told.add(lock.key() + " " + lock.fencingToken() + " " + reason);
            lost.countDown();
        });
        PermitHandle permit = shortLease.semaphore(key, 2).acquire(LockOptions.tryOnce());
        redis.delete("redis-lock:{" + key + "}:semaphore:holders"); // Redis lost them (a restart without data, say)
        assertThat(lost.await(5, TimeUnit.SECONDS)).as("a listener was told").isTrue();
        assertThat(told).singleElement().asString().startsWith(key + " " + permit.fencingToken())
                .contains("permits gone from Redis");
        assertThat(permit.isHeld()).isFalse();
        assertThatThrownBy(permit::release).isInstanceOf(LockLostException.class).hasMessageContaining(key);
    }

    @Test
    void anAcquisitionRetriedAfterItsReplyWasLostGetsATokenAboveOtherHoldersTokens() {
        SemaphoreScripts scripts = new SemaphoreScripts(redis, new RedisLockKeys(RedisLockConfig.DEFAULT_KEY_PREFIX));
        long lostReply = scripts.acquire(key, "client:1:1", 1, 30_000, 3, "client:1:1", 0, false).token();
        long other = scripts.acquire(key, "client:2:2", 1, 30_000, 3, "client:2:2", 0, false).token();
        long retried = scripts.acquire(key, "client:1:1", 1, 30_000, 3, "client:1:1", 0, false).token();
        assertThat(other).isGreaterThan(lostReply);
        assertThat(retried).as("not the counter's last token, which is the other holder's").isGreaterThan(other);
        assertThat(scripts.available(key, 3)).as("the retry took no second permit").isEqualTo(1);
        scripts.release(key, "client:1:1", "unused");
        scripts.release(key, "client:2:2", "unused");
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> first.semaphore(key, 0)).withMessageContaining("at least 1");
        assertThatIllegalArgumentException().isThrownBy(() -> first.semaphore(" ", 1)).withMessageContaining("blank");
        assertThatIllegalArgumentException().isThrownBy(() -> first.semaphore(key, 1).acquire(0, LockOptions.tryOnce()));
        assertThatIllegalArgumentException().isThrownBy(() -> first.semaphore(key, 1).setPermits(-1));
        Optional<PermitHandle> none = first.semaphore(key, 1).tryAcquire(2, LockOptions.tryOnce());
        assertThat(none).as("more than the limit: never free").isEmpty();
    }
}
