package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;

import io.github.redislock.test.Await;
import io.github.redislock.test.Concurrently;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Lock behaviour against a real redis-server: exclusion, reentrancy, ownership, leases, waiting, tokens, several keys at once. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class RedisLockTemplateTest {

    private static final Duration TWO_SECONDS = Duration.ofSeconds(2);

    static RedisServerProcess server;
    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    @PerTest
    String key;

    @Test
    void sixteenThreadsOverThreeClientsNeverLoseAnUpdateOfANonAtomicCounter() throws Exception {
        RedisLockTemplate third = clients.lockTemplate();
        List<RedisLockTemplate> templates = List.of(first, second, third);
        String counter = "counter:" + key;
        redis.opsForValue().set(counter, "0");
        int threads = 16;
        int rounds = 25;
        Concurrently.run(threads, rounds, thread -> templates.get(thread % templates.size()).execute(key,
                LockOptions.waitFor(Duration.ofSeconds(30)), lock -> {
                    long value = Long.parseLong(redis.opsForValue().get(counter));
                    Thread.sleep(1); // widen the window a second holder would need
                    redis.opsForValue().set(counter, Long.toString(value + 1));
                    return null;
                }));
        assertThat(redis.opsForValue().get(counter)).isEqualTo(Integer.toString(threads * rounds));
        assertThat(first.diagnostics().localLockCount()).isZero();
    }

    @Test
    void aClosedTemplateRefusesNewLocksAndStillReleasesTheOnesItHolds() {
        RedisLockTemplate closing = clients.lockTemplate();
        LockHandle held = closing.acquire(key, LockOptions.tryOnce());

        closing.close();

        assertThatThrownBy(() -> closing.acquire(key + ":new", LockOptions.tryOnce()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> closing.tryAcquire(key + ":new", LockOptions.tryOnce()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(redis.hasKey("redis-lock:{" + key + ":new}")).as("nothing taken once closed").isFalse();
        held.release(); // a method that ran across the close still gives its lock back
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).as("free at once, not at lease end").isPresent()
                .get().satisfies(LockHandle::release);
    }

    @Test
    void locksOfEveryTypeHeldAcrossTheCloseAreStillReleased() {
        RedisLockTemplate closing = clients.lockTemplate();
        LockHandle exclusive = closing.acquire(key + ":exclusive", LockOptions.tryOnce());
        LockHandle fair = closing.fairLock(key + ":fair").acquire(LockOptions.tryOnce());
        LockHandle read = closing.readWriteLock(key + ":rw-read").readLock().acquire(LockOptions.tryOnce());
        LockHandle write = closing.readWriteLock(key + ":rw-write").writeLock().acquire(LockOptions.tryOnce());
        PermitHandle permit = closing.semaphore(key + ":semaphore", 1).acquire(LockOptions.tryOnce());
        LockHandle leased = closing.acquire(key + ":leased", LockOptions.tryOnce().withLease(Duration.ofSeconds(30)));
        LockHandle heldAtLeast = closing.acquire(key + ":hold-at-least",
                LockOptions.tryOnce().withHoldAtLeast(Duration.ofMillis(300)));

        closing.close();
        for (LockHandle handle : List.of(exclusive, fair, read, write, permit, leased, heldAtLeast)) {
            handle.release();
        }

        assertThat(second.tryAcquire(key + ":exclusive", LockOptions.tryOnce())).as("exclusive").isPresent().get()
                .satisfies(LockHandle::release);
        assertThat(second.fairLock(key + ":fair").tryAcquire(LockOptions.tryOnce())).as("fair").isPresent().get()
                .satisfies(LockHandle::release);
        assertThat(second.readWriteLock(key + ":rw-read").writeLock().tryAcquire(LockOptions.tryOnce()))
                .as("a writer after the reader").isPresent().get().satisfies(LockHandle::release);
        assertThat(second.readWriteLock(key + ":rw-write").writeLock().tryAcquire(LockOptions.tryOnce()))
                .as("a writer after the writer").isPresent().get().satisfies(LockHandle::release);
        assertThat(second.semaphore(key + ":semaphore", 1).tryAcquire(LockOptions.tryOnce())).as("the permit")
                .isPresent().get().satisfies(LockHandle::release);
        assertThat(second.tryAcquire(key + ":leased", LockOptions.tryOnce())).as("fixed lease").isPresent().get()
                .satisfies(LockHandle::release);
        assertThat(second.tryAcquire(key + ":hold-at-least", LockOptions.tryOnce())).as("within its minimum hold")
                .isEmpty();
        assertThat(second.tryAcquire(key + ":hold-at-least", LockOptions.waitFor(TWO_SECONDS)))
                .as("after its minimum hold").isPresent().get().satisfies(LockHandle::release);
    }

    @Test
    void anAsyncMethodRunningAcrossTheCloseStillReleasesItsLock() throws Exception {
        RedisLockTemplate closing = clients.lockTemplate();
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<String> done = closing.executeAsync(key, LockOptions.tryOnce(),
                () -> work);
        Await.until(() -> redis.hasKey(lockKey()), TWO_SECONDS, "the async method to hold its lock");

        closing.close();
        work.complete("done");

        assertThat(done.get(5, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).as("free once the method ended").isPresent().get()
                .satisfies(LockHandle::release);
    }

    @Test
    void threadsOfOneJvmQueueInMemoryAndPassTheLockOnWithFewerScriptsThanCycles() throws Exception {
        long before = evalshaCalls();
        int threads = 8;
        int rounds = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30))).release();
                }
                return null;
            }));
        }
        for (Future<?> future : futures) {
            future.get(1, TimeUnit.MINUTES);
        }
        pool.shutdown();
        long cycles = (long) threads * rounds;
        long scripts = evalshaCalls() - before;
        System.out.println(cycles + " lock cycles of 8 threads on one key took " + scripts + " script calls");
        // never more than an acquire and a release per cycle (no failed attempts, no waiting in Redis); a release
        // hands the lock to a queued thread in one script, and passes it on in memory (none) shortly after that
        assertThat(scripts).isLessThan(cycles);
        assertThat(redis.hasKey(lockKey())).isFalse();
    }

    @Test
    void aReleaseHandsTheLockToAQueuedThreadOfTheSameClientInOneRoundTripWithANewToken() throws Exception {
        LockHandle held = first.acquire(key, LockOptions.tryOnce());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String[]> next = pool.submit(() -> {
                try (LockHandle taken = first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                    return new String[] {Long.toString(taken.fencingToken()), Long.toString(evalshaCalls()),
                            redis.opsForValue().get(lockKey())};
                }
            });
            LocalQueue.awaitQueued(first, key, 1);
            long before = evalshaCalls();
            held.release();
            String[] seen = next.get(10, TimeUnit.SECONDS);
            assertThat(Long.parseLong(seen[1]) - before).as("scripts from the release to the next holder").isEqualTo(1);
            assertThat(Long.parseLong(seen[0])).isGreaterThan(held.fencingToken());
            assertThat(seen[2]).startsWith(first.clientId() + ":handover:");
        } finally {
            pool.shutdown();
        }
        assertThat(redis.hasKey(lockKey())).isFalse();
        assertThat(first.diagnostics().localLockCount()).isZero();
    }

    @Test
    void aReleaseDoesNotHandTheLockOverWhileAnotherClientWaits() throws Exception {
        LockHandle held = first.acquire(key, LockOptions.tryOnce());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> remote = pool.submit(() -> second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10))).release());
            awaitWaiterRegistered();
            Future<String> local = pool.submit(() -> {
                try (LockHandle taken = first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                    return redis.opsForValue().get(lockKey());
                }
            });
            LocalQueue.awaitQueued(first, key, 1);
            held.release();
            assertThat(local.get(10, TimeUnit.SECONDS)).as("the local thread took the lock through Redis")
                    .doesNotContain(":handover:");
            remote.get(10, TimeUnit.SECONDS);
        } finally {
            pool.shutdown();
        }
        assertThat(redis.hasKey(lockKey())).isFalse();
    }

    @Test
    void aHandedOverLockIsGivenBackWhenTheQueuedThreadGivesUp() throws Exception {
        LockHandle held = first.acquire(key, LockOptions.tryOnce());
        Thread impatient = new Thread(() -> first.tryAcquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))
                .ifPresent(LockHandle::release));
        impatient.start();
        LocalQueue.awaitQueued(first, key, 1);
        impatient.interrupt(); // it gives up while the release below hands it the lock: nobody takes it
        held.release();
        impatient.join(5000);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (Boolean.TRUE.equals(redis.hasKey(lockKey())) && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(redis.hasKey(lockKey())).as("nobody holds it in Redis").isFalse();
        assertThat(first.diagnostics().localLockCount()).isZero();
        assertThat(first.diagnostics().scheduledRenewalCount()).isZero();
        try (LockHandle again = second.acquire(key, LockOptions.tryOnce())) {
            assertThat(again.isHeld()).isTrue();
        }
    }

    @Test
    void contendingClientsAllMakeProgressOnAHotKey() throws Exception {
        RedisLockTemplate third = clients.lockTemplate();
        List<RedisLockTemplate> templates = List.of(first, second, third);
        long[] acquisitions = new long[templates.size()];
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < templates.size(); c++) {
            for (int t = 0; t < 3; t++) {
                int client = c;
                Thread thread = new Thread(() -> {
                    while (System.nanoTime() < end) {
                        try (LockHandle lock = templates.get(client).acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                            acquisitions[client]++; // guarded by the lock itself
                        }
                    }
                });
                threads.add(thread);
                thread.start();
            }
        }
        for (Thread thread : threads) {
            thread.join();
        }
        long total = java.util.Arrays.stream(acquisitions).sum();
        System.out.println("hot key, 3 clients x 3 threads, 2 s: " + java.util.Arrays.toString(acquisitions));
        for (long count : acquisitions) {
            assertThat(count).as("each client's share of " + total).isGreaterThan(total / 30);
        }
    }

    @Test
    void aNestedAcquireByTheHolderCostsNoRedisCommandAndKeepsTheToken() {
        long before = evalshaCalls();
        try (LockHandle outer = first.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
            long afterOuter = evalshaCalls();
            try (LockHandle inner = first.acquire(key, LockOptions.waitFor(TWO_SECONDS));
                 LockHandle innermost = first.acquire(key, LockOptions.tryOnce())) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
                assertThat(innermost.fencingToken()).isEqualTo(outer.fencingToken());
            }
            assertThat(evalshaCalls()).isEqualTo(afterOuter);
            assertThat(afterOuter - before).isEqualTo(1);
            assertThat(redis.hasKey(lockKey())).as("still held after the inner releases").isTrue();
            assertThat(outer.isHeld()).isTrue();
            assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        }
        assertThat(redis.hasKey(lockKey())).isFalse();
    }

    @Test
    void aReleaseByAnotherThreadIsRefusedAndLeavesRedisUntouched() throws Exception {
        try (LockHandle handle = first.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
            String ownerInRedis = redis.opsForValue().get(lockKey());
            AtomicReference<Throwable> refused = new AtomicReference<>();
            Thread other = new Thread(() -> {
                try {
                    handle.release();
                } catch (Throwable t) {
                    refused.set(t);
                }
                try {
                    first.lock(key).unlock();
                } catch (Throwable t) {
                    refused.get().addSuppressed(t);
                }
            });
            other.start();
            other.join();
            assertThat(refused.get()).isInstanceOf(IllegalMonitorStateException.class);
            assertThat(refused.get().getSuppressed()).singleElement().isInstanceOf(IllegalMonitorStateException.class);
            assertThat(redis.opsForValue().get(lockKey())).isEqualTo(ownerInRedis);
            assertThat(handle.isHeld()).isTrue();
        }
    }

    @Test
    void aHandleReleasedTwiceIsRefused() {
        LockHandle handle = first.acquire(key, LockOptions.waitFor(TWO_SECONDS));
        handle.release();
        assertThat(handle.isHeld()).isFalse();
        assertThatThrownBy(handle::release).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("already released");
    }

    @Test
    void everyAcquisitionHasItsOwnOwnerIdSoALateCleanUpCannotReleaseALaterOne() {
        String firstOwner;
        try (LockHandle handle = first.acquire(key, LockOptions.tryOnce())) {
            firstOwner = redis.opsForValue().get(lockKey());
        }
        try (LockHandle again = first.acquire(key, LockOptions.tryOnce())) {
            String secondOwner = redis.opsForValue().get(lockKey());
            assertThat(secondOwner).startsWith(first.clientId() + ":" + Thread.currentThread().getId() + ":")
                    .isNotEqualTo(firstOwner);
        }
    }

    @Test
    void theWatchdogKeepsALockForThreeTimesItsLeaseAndStopsAtRelease() throws Exception {
        try (RedisClients own = new RedisClients(server)) {
            RedisLockTemplate shortLease = own.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(600)));
            LockHandle handle = shortLease.acquire(key, LockOptions.waitFor(TWO_SECONDS));
            assertThat(shortLease.diagnostics().scheduledRenewalCount()).isEqualTo(1);
            long renewalsBefore = commandCalls("pexpire");
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1800);
            while (System.nanoTime() < end) {
                assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
                assertThat(handle.isHeld()).isTrue();
                Thread.sleep(100);
            }
            assertThat(commandCalls("pexpire") - renewalsBefore).as("renewals while held").isGreaterThanOrEqualTo(3);
            assertThat(redis.getExpire(lockKey(), TimeUnit.MILLISECONDS)).isPositive();
            handle.release();
            assertThat(shortLease.diagnostics().scheduledRenewalCount()).isZero();
            long renewalsAtRelease = commandCalls("pexpire");
            Thread.sleep(1000); // more than three watchdog ticks
            assertThat(commandCalls("pexpire")).as("no renewal after the release").isEqualTo(renewalsAtRelease);
        }
    }

    @Test
    void anExplicitLeaseIsNotRenewedAndTheLockFreesItselfWhenItEnds() throws Exception {
        LockHandle handle = first.acquire(key, LockOptions.waitFor(TWO_SECONDS).withLease(Duration.ofMillis(300)));
        assertThat(first.diagnostics().scheduledRenewalCount()).isZero();
        long start = System.nanoTime();
        try (LockHandle taken = second.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(waitedMs).isBetween(150L, 1000L);
            assertThat(handle.isHeld()).isFalse();
            assertThat(taken.fencingToken()).isGreaterThan(handle.fencingToken());
        }
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class)
                .hasMessageContaining(key).hasMessageContaining("may have been changed by another holder");
    }

    @Test
    void aWaiterGivesUpAfterItsWaitTimeAndSaysWhichKey() {
        try (LockHandle held = first.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> second.acquire(key, LockOptions.waitFor(Duration.ofMillis(300))))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("'" + key + "'").hasMessageContaining("300ms");
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(waitedMs).isBetween(290L, 800L);
            assertThat(redis.hasKey(waitersKey())).as("the waiter withdrew").isFalse();
            assertThat(redis.hasKey(waitersKey() + ":expiry")).isFalse();
            assertThat(second.diagnostics().localLockCount()).isZero();
        }
    }

    @Test
    void aWaiterHoldsTheLockWithinMillisecondsOfTheRelease() throws Exception {
        List<Long> handoffMicros = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            LockHandle held = first.acquire(key, LockOptions.waitFor(TWO_SECONDS));
            CountDownLatch waiting = new CountDownLatch(1);
            long[] acquiredAt = new long[1];
            Thread waiter = new Thread(() -> {
                waiting.countDown();
                try (LockHandle h = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                    acquiredAt[0] = System.nanoTime();
                }
            });
            waiter.start();
            waiting.await();
            Thread.sleep(30); // let the waiter register and sleep
            long releasedAt = System.nanoTime();
            held.release();
            waiter.join();
            handoffMicros.add((acquiredAt[0] - releasedAt) / 1000);
        }
        handoffMicros.sort(null);
        long median = handoffMicros.get(handoffMicros.size() / 2);
        System.out.println("hand-off µs, sorted: " + handoffMicros);
        // the lease is 30 s: anything near it would mean polling at the TTL, not a wake-up
        assertThat(median).as("median hand-off in µs").isLessThan(20_000);
        assertThat(handoffMicros.get(handoffMicros.size() - 1)).as("slowest hand-off in µs").isLessThan(1_000_000);
    }

    @Test
    void aReleaseGrantsTheLockToTheLongestWaitingClientAndWakesNoOther() throws Exception {
        int waiters = 6;
        List<RedisClients> extra = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch proceed = new CountDownLatch(1);
        LockHandle held = first.acquire(key, LockOptions.waitFor(TWO_SECONDS));
        try {
            for (int i = 0; i < waiters; i++) {
                RedisClients own = new RedisClients(server);
                extra.add(own);
                RedisLockTemplate template = own.lockTemplate();
                String name = "waiter-" + i;
                Thread thread = new Thread(() -> {
                    try (LockHandle h = template.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                        order.add(name);
                        proceed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                threads.add(thread);
                thread.start();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (redis.opsForZSet().size(waitersKey()) < i + 1 && System.nanoTime() < end) {
                    Thread.sleep(2);
                }
            }
            assertThat(redis.opsForZSet().size(waitersKey())).isEqualTo(waiters);
            long before = awaitNoScriptCalls();
            held.release();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (order.isEmpty() && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            // the release, which grants the lock to the longest-waiting client; that client's confirmation (or, if its
            // latest look was too long ago to hold on the grant's message, its request, which adopts the grant); and
            // the releasing client's look, once the grant's turn has ended, at whether it was taken; the other five
            // sleep on
            Await.until(() -> evalshaCalls() - before >= 3, Duration.ofSeconds(5), "the look at the turn's end");
            assertThat(awaitNoScriptCalls() - before).isEqualTo(3);
            assertThat(order).containsExactly("waiter-0");
            assertThat(redis.opsForZSet().size(waitersKey())).isEqualTo(waiters - 1);
        } finally {
            proceed.countDown();
            for (Thread thread : threads) {
                thread.join(30_000);
            }
            extra.forEach(RedisClients::close);
        }
        assertThat(order).hasSize(waiters);
        assertThat(redis.hasKey(waitersKey())).isFalse();
    }

    @Test
    void fencingTokensStrictlyIncreaseAcrossClients() {
        long last = 0;
        for (int i = 0; i < 200; i++) {
            RedisLockTemplate template = i % 2 == 0 ? first : second;
            try (LockHandle handle = template.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
                assertThat(handle.fencingToken()).isGreaterThan(last);
                last = handle.fencingToken();
            }
        }
    }

    @Test
    void theLockViewHonoursTheJucContract() throws Exception {
        Lock lock = first.lock(key);
        Lock other = second.lock(key);
        assertThat(lock.tryLock()).isTrue();
        lock.lock(); // reentrant
        assertThat(other.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
        lock.unlock();
        assertThat(other.tryLock()).isFalse();
        lock.unlock();
        assertThat(other.tryLock(1, TimeUnit.SECONDS)).isTrue();
        other.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void lockInterruptiblyAndTimedTryLockStopOnInterruptAndLeaveNothingBehind() throws Exception {
        try (LockHandle held = first.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
            for (int variant = 0; variant < 2; variant++) {
                boolean timed = variant == 1;
                AtomicReference<Throwable> outcome = new AtomicReference<>();
                Thread waiter = new Thread(() -> {
                    try {
                        if (timed) {
                            second.lock(key).tryLock(30, TimeUnit.SECONDS);
                        } else {
                            second.lock(key).lockInterruptibly();
                        }
                    } catch (Throwable t) {
                        outcome.set(t);
                    }
                });
                waiter.start();
                awaitWaiterRegistered();
                waiter.interrupt();
                waiter.join(5000);
                assertThat(waiter.isAlive()).isFalse();
                assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
                assertThat(second.diagnostics().localLockCount()).isZero();
                assertThat(redis.hasKey(waitersKey())).isFalse();
            }
            assertThat(held.isHeld()).isTrue();
        }
    }

    @Test
    void lockKeepsWaitingWhenInterruptedAndRestoresTheFlag() throws Exception {
        LockHandle held = first.acquire(key, LockOptions.waitFor(TWO_SECONDS));
        AtomicReference<Boolean> interruptedAfterLock = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            Lock lock = second.lock(key);
            lock.lock();
            interruptedAfterLock.set(Thread.currentThread().isInterrupted());
            lock.unlock();
        });
        waiter.start();
        awaitWaiterRegistered();
        waiter.interrupt();
        Thread.sleep(100);
        assertThat(waiter.isAlive()).as("still waiting after the interrupt").isTrue();
        held.release();
        waiter.join(5000);
        assertThat(interruptedAfterLock.get()).isTrue();
    }

    @Test
    void executeReleasesWhenTheActionThrows() {
        assertThatThrownBy(() -> first.execute(key, LockOptions.waitFor(TWO_SECONDS), lock -> {
            throw new java.io.IOException("boom");
        })).isInstanceOf(java.io.IOException.class);
        assertThat(redis.hasKey(lockKey())).isFalse();
        assertThat(first.diagnostics().localLockCount()).isZero();
    }

    @Test
    void badInputIsRejectedNamingTheArgument() {
        assertThatThrownBy(() -> first.acquire(null, LockOptions.tryOnce()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock key must not be null");
        assertThatThrownBy(() -> first.acquire("  ", LockOptions.tryOnce()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
        assertThatThrownBy(() -> first.acquire("x".repeat(513), LockOptions.tryOnce()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("512 bytes");
        assertThatThrownBy(() -> first.acquire("a\nb", LockOptions.tryOnce()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control characters");
        assertThatThrownBy(() -> LockOptions.waitFor(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waitTime");
        assertThatThrownBy(() -> LockOptions.tryOnce().withLease(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> LockOptions.tryOnce().withLease(Duration.ofSeconds(-5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
        assertThat(first.diagnostics().localLockCount()).isZero();
    }

    @Test
    void scriptsAreLoadedAgainAfterScriptFlush() {
        first.acquire(key, LockOptions.tryOnce()).release();
        server.command("SCRIPT", "FLUSH");
        try (LockHandle handle = first.acquire(key, LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
        }
        assertThat(redis.hasKey(lockKey())).isFalse();
    }

    @Test
    void scriptsAreLoadedAgainAfterScriptFlushOnLettuceToo() {
        RedisLockTemplate lettuce = clients.lockTemplate(clients.lettuceRedisTemplate());
        lettuce.acquire(key, LockOptions.tryOnce()).release();
        server.command("SCRIPT", "FLUSH");
        try (LockHandle handle = lettuce.acquire(key, LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
            assertThat(redis.hasKey(lockKey())).isTrue();
        }
        assertThat(redis.hasKey(lockKey())).isFalse();
    }

    @Test
    void theReleaseSubscriptionIsTakenAtTheFirstWaitAndKeptWhileTheTemplateLives() throws Exception {
        // stopping a subscription hands its connection back to the pool while the subscription thread may still read
        // from it; the replies of lock scripts sent on it then cross. So once taken, it stays.
        try (RedisClients own = new RedisClients(server)) {
            RedisLockTemplate waiter = own.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(600)));
            String channel = "redis-lock:wake:" + waiter.clientId();
            waiter.acquire(key, LockOptions.tryOnce()).release();
            assertThat(subscribers(channel)).as("no subscription before the first wait").isZero();
            for (int round = 1; round <= 2; round++) {
                LockHandle held = first.acquire(key, LockOptions.tryOnce()); // a 30 s lease: no early re-check
                Future<Long> waitedMillis = Executors.newSingleThreadExecutor().submit(() -> {
                    long start = System.nanoTime();
                    try (LockHandle taken = waiter.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    }
                });
                try {
                    awaitWaiterRegistered();
                    // the first wait starts the subscription in the background (the waiter re-checks until it is up)
                    awaitTrue(() -> subscribers(channel) >= 1);
                    assertThat(subscribers(channel)).as("subscribed while waiting, round " + round).isEqualTo(1);
                } finally {
                    held.release(); // a failure above must not leave the shared client holding a lock
                }
                assertThat(waitedMillis.get(10, TimeUnit.SECONDS)).as("woken by the release, round " + round)
                        .isLessThan(3000);
                Thread.sleep(1500); // more than two leases without a waiter
                assertThat(subscribers(channel)).as("still subscribed when idle, round " + round).isEqualTo(1);
                assertThat(waiter.diagnostics().isSubscribed()).isTrue();
            }
        }
    }

    private int subscribers(String channel) {
        List<String> reply = server.command("PUBSUB", "NUMSUB", channel).lines().toList();
        return Integer.parseInt(reply.get(reply.size() - 1).trim());
    }

    @Test
    void tenThousandCyclesOnDistinctKeysLeaveNothingBehind() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 2500; i++) {
                    String k = key + ":" + thread + ":" + i;
                    RedisLockTemplate template = i % 2 == 0 ? first : second;
                    try (LockHandle h = template.acquire(k, LockOptions.waitFor(TWO_SECONDS))) {
                        if (i % 100 == 0) { // some contention, so waiters register and withdraw
                            Optional<LockHandle> rival = (template == first ? second : first)
                                    .tryAcquire(k, LockOptions.waitFor(Duration.ofMillis(5)));
                            assertThat(rival).isEmpty();
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> future : futures) {
            future.get(3, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertThat(first.diagnostics().localLockCount()).isZero();
        assertThat(second.diagnostics().localLockCount()).isZero();
        assertThat(first.diagnostics().scheduledRenewalCount()).isZero();
        assertThat(second.diagnostics().scheduledRenewalCount()).isZero();
        Thread.sleep(LockScripts.FENCE_GRACE_MILLIS + 300);
        assertThat(server.command("KEYS", "redis-lock:{" + key + "*")).isEmpty();
        // one wake-up channel per client, never one per key
        assertThat(server.command("PUBSUB", "CHANNELS", "redis-lock:*").lines())
                .allMatch(channel -> channel.matches("redis-lock:wake:[0-9a-f]{32}"))
                .noneMatch(channel -> channel.contains(key));
    }

    private void awaitWaiterRegistered() throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!Boolean.TRUE.equals(redis.hasKey(waitersKey())) && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        assertThat(redis.hasKey(waitersKey())).as("waiter registered").isTrue();
        Thread.sleep(20);
    }

    /** Waits until no client runs a script for 100 ms (every waiter asleep); returns the script calls so far. */
    private long awaitNoScriptCalls() throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        long calls = evalshaCalls();
        while (System.nanoTime() < end) {
            Thread.sleep(100);
            long now = evalshaCalls();
            if (now == calls) {
                return now;
            }
            calls = now;
        }
        throw new AssertionError("clients kept running scripts for 5 s: someone is polling");
    }

    @Test
    void aWaitingClientTakesTheLockBeforeAThreadQueuedInTheReleasingClient() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 10; round++) {
                List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
                CountDownLatch held = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                Future<?> holder = pool.submit(() -> {
                    try (LockHandle handle = first.acquire(key, LockOptions.waitFor(TWO_SECONDS))) {
                        held.countDown();
                        release.await();
                    }
                    return null;
                });
                assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
                Future<?> otherClient = pool.submit(() -> {
                    try (LockHandle handle = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                        order.add("waiting client");
                    }
                    return null;
                });
                awaitTrue(() -> redis.opsForZSet().score(waitersKey(), second.clientId()) != null);
                Future<?> sameClient = pool.submit(() -> {
                    try (LockHandle handle = first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                        order.add("releasing client's next thread");
                    }
                    return null;
                });
                awaitTrue(() -> first.localLock(key) != null && first.localLock(key).mutex.hasQueuedThreads());
                release.countDown();
                holder.get(5, TimeUnit.SECONDS);
                otherClient.get(10, TimeUnit.SECONDS);
                sameClient.get(10, TimeUnit.SECONDS);
                assertThat(order).as("round " + round).containsExactly("waiting client", "releasing client's next thread");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        Await.until(condition, Duration.ofSeconds(5), "the condition");
    }

    private long evalshaCalls() {
        return commandCalls("evalsha");
    }

    /** Calls of a command so far, including those made from scripts (INFO commandstats). */
    private long commandCalls(String command) {
        String stats = server.command("INFO", "commandstats");
        return stats.lines().filter(l -> l.startsWith("cmdstat_" + command + ":")).findFirst()
                .map(l -> Long.parseLong(l.substring(l.indexOf("calls=") + 6, l.indexOf(','))))
                .orElse(0L);
    }

    private String lockKey() {
        return "redis-lock:{" + key + "}";
    }

    private String waitersKey() {
        return lockKey() + ":waiters";
    }

    // ---------------------------------------------------------------- acquireAll

    @Test
    void acquireAllTakesTheKeysSortedWithoutDuplicatesAndReleasesThemAll() {
        String a = key + ":a";
        String b = key + ":b";
        MultiLockHandle locks = first.acquireAll(List.of(b, a, b), LockOptions.tryOnce());
        assertThat(locks.keys()).containsExactly(a, b);
        assertThat(locks.fencingTokens()).containsOnlyKeys(a, b);
        assertThat(locks.fencingTokens().keySet()).containsExactly(a, b);
        assertThat(locks.fencingToken(a)).isPositive();
        assertThat(locks.isHeld()).isTrue();
        assertThat(second.tryAcquire(a, LockOptions.tryOnce())).as("a is held").isEmpty();
        assertThat(second.tryAcquire(b, LockOptions.tryOnce())).as("b is held").isEmpty();

        locks.close();

        assertThat(locks.isHeld()).isFalse();
        assertThatThrownBy(locks::release).isInstanceOf(IllegalMonitorStateException.class);
        second.acquire(a, LockOptions.tryOnce()).release();
        second.acquire(b, LockOptions.tryOnce()).release();
        assertThat(first.diagnostics().localLockCount()).isZero();
    }

    @Test
    void whenOneKeyIsHeldAcquireAllHoldsNoneAndNamesThatKey() {
        String a = key + ":a";
        String b = key + ":b";
        String c = key + ":c";
        try (LockHandle heldElsewhere = second.acquire(b, LockOptions.tryOnce())) {
            assertThatThrownBy(() -> first.acquireAll(List.of(c, b, a), LockOptions.waitFor(Duration.ofMillis(200))))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("'" + b + "'");
            assertThat(first.tryAcquireAll(List.of(c, b, a), LockOptions.waitFor(Duration.ofMillis(200)))).isEmpty();

            assertThat(first.diagnostics().localLockCount()).as("nothing held or queued in this JVM").isZero();
            assertThat(redis.hasKey("redis-lock:{" + a + "}")).as("a, taken before b, was released").isFalse();
            assertThat(redis.hasKey("redis-lock:{" + c + "}")).as("c was never taken").isFalse();
            second.acquire(a, LockOptions.tryOnce()).release();
        }
    }

    @Test
    void acquireAllRefusesNoKeysAndInvalidKeysBeforeTakingAny() {
        assertThatIllegalArgumentException().isThrownBy(() -> first.acquireAll(List.of(), LockOptions.tryOnce()));
        assertThatIllegalArgumentException().isThrownBy(() -> first.acquireAll(List.of(key + ":a", " "), LockOptions.tryOnce()));
        assertThat(first.diagnostics().localLockCount()).isZero();
        second.acquire(key + ":a", LockOptions.tryOnce()).release();
    }

    @Test
    void twoClientsNamingTheSameKeysInOppositeOrdersNeverDeadlockAndNeverOverlap() throws Exception {
        String x = key + ":x";
        String y = key + ":y";
        String counter = key + ":counter";
        redis.opsForValue().set(counter, "0");
        int rounds = 40;
        List<long[]> intervals = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (List<String> order : List.of(List.of(x, y), List.of(y, x))) {
                RedisLockTemplate client = order.get(0).equals(x) ? first : second;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        // a wait far shorter than the test: two callers each holding one key would both fail
                        try (MultiLockHandle locks = client.acquireAll(order, LockOptions.waitFor(Duration.ofSeconds(3)))) {
                            long enter = System.nanoTime();
                            long value = Long.parseLong(redis.opsForValue().get(counter));
                            Thread.sleep(1); // widen the window a second holder would need
                            redis.opsForValue().set(counter, Long.toString(value + 1));
                            synchronized (intervals) {
                                intervals.add(new long[] {enter, System.nanoTime()});
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(redis.opsForValue().get(counter)).isEqualTo(Integer.toString(2 * rounds));
        intervals.sort((p, q) -> Long.compare(p[0], q[0]));
        for (int i = 1; i < intervals.size(); i++) {
            assertThat(intervals.get(i)[0]).as("critical section %d begins after the one before ended", i)
                    .isGreaterThan(intervals.get(i - 1)[1]);
        }
    }
}
