package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Await;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.Intervals.Interval;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every backend of {@link LockOperations} promises for the exclusive lock, whatever it runs on: a subclass
 * names the deployment (one Redis, Sentinel, Cluster, Redlock over independent masters) and how to make two clients
 * of it and how to take a lock away in Redis. Two clients of one JVM stand for two application instances (each has
 * its own client id, connections and watchdog), so their critical sections compare on one clock.
 */
abstract class ExclusiveLockContract {

    /** Short enough that a lost lock is noticed within a test; renewed every third of it. */
    static final Duration WATCHDOG_LEASE = Duration.ofMillis(1500);

    static LockOperations first;
    static LockOperations second;

    /** A client of the deployment with {@code config}; closed by the subclass's infrastructure after the class. */
    abstract LockOperations newClient(RedisLockConfig config);

    /** Deletes the lock of {@code key} from Redis behind its holder's back, as an expiry or a failover would. */
    abstract void removeLock(String key);

    @BeforeEach
    void clients() {
        if (first == null) {
            RedisLockConfig config = RedisLockConfig.defaults().withWatchdogLease(WATCHDOG_LEASE)
                    .withDefaultWaitTime(Duration.ofSeconds(10));
            first = newClient(config);
            second = newClient(config);
        }
    }

    @AfterAll
    static void forgetClients() {
        first = null;
        second = null;
    }

    @Test
    void threadsOfTwoClientsNeverOverlapAndEachHolderGetsAHigherToken() throws Exception {
        String key = "contract:exclusion";
        List<Interval> sections = new CopyOnWriteArrayList<>();
        List<long[]> tokens = Collections.synchronizedList(new ArrayList<>());
        int[] counter = {0}; // read, pause, write back: a lost update shows two holders at once
        List<Thread> threads = new ArrayList<>();
        for (LockOperations client : List.of(first, second)) {
            for (int t = 0; t < 3; t++) {
                Thread thread = new Thread(() -> {
                    for (int i = 0; i < 8; i++) {
                        try (LockHandle handle = client.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                            long enter = System.nanoTime();
                            int seen = counter[0];
                            Thread.onSpinWait();
                            sleepMillis(1);
                            counter[0] = seen + 1;
                            long exit = System.nanoTime();
                            sections.add(new Interval(enter, exit));
                            tokens.add(new long[] {enter, handle.fencingToken()});
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
        }
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertThat(sections).hasSize(48);
        assertThat(Intervals.maxConcurrency(sections)).as("holders at once").isEqualTo(1);
        assertThat(counter[0]).as("no lost update").isEqualTo(48);
        List<long[]> byEntry = new ArrayList<>(tokens);
        byEntry.sort((a, b) -> Long.compare(a[0], b[0]));
        for (int i = 1; i < byEntry.size(); i++) {
            assertThat(byEntry.get(i)[1]).as("token of section " + i).isGreaterThan(byEntry.get(i - 1)[1]);
        }
    }

    @Test
    void theHolderReentersWithItsTokenAndHoldsUntilTheOutermostRelease() {
        String key = "contract:reentrant";
        try (LockHandle outer = first.acquire(key, LockOptions.tryOnce())) {
            try (LockHandle inner = first.lock(key).acquire(LockOptions.tryOnce())) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
            }
            assertThat(outer.isHeld()).isTrue();
            assertThat(second.tryAcquire(key, LockOptions.tryOnce())).as("after the inner release").isEmpty();
        }
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).as("after the outer release").get()
                .satisfies(LockHandle::release);
    }

    @Test
    void theLockMethodsCheckTheOwner() throws Exception {
        RedisLock lock = first.lock("contract:owner");
        assertThatThrownBy(lock::unlock).as("not held").isInstanceOf(IllegalMonitorStateException.class);
        lock.lock();
        try {
            CompletableFuture<Throwable> otherThread = CompletableFuture.supplyAsync(() -> {
                try {
                    lock.unlock();
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            assertThat(otherThread.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class);
            assertThat(second.lock("contract:owner").tryLock()).isFalse();
        } finally {
            lock.unlock();
        }
        assertThat(second.lock("contract:owner").tryLock()).isTrue();
        second.lock("contract:owner").unlock();
    }

    @Test
    void acquireAllTakesEveryKeyOrNoneAndReleasesInReverse() {
        try (LockHandle busy = second.acquire("contract:all:b", LockOptions.tryOnce())) {
            assertThat(first.tryAcquireAll(List.of("contract:all:c", "contract:all:b", "contract:all:a"),
                    LockOptions.waitFor(Duration.ofMillis(200)))).as("one key busy").isEmpty();
            assertThat(second.tryAcquire("contract:all:a", LockOptions.tryOnce())).as("nothing kept").get()
                    .satisfies(LockHandle::release);
            assertThatThrownBy(() -> first.acquireAll(List.of("contract:all:a", "contract:all:b"), LockOptions.tryOnce()))
                    .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("contract:all:b");
        }
        try (MultiLockHandle all = first.acquireAll(List.of("contract:all:c", "contract:all:a", "contract:all:b",
                "contract:all:a"), LockOptions.tryOnce())) {
            assertThat(all.keys()).containsExactly("contract:all:a", "contract:all:b", "contract:all:c");
            assertThat(second.tryAcquire("contract:all:c", LockOptions.tryOnce())).isEmpty();
        }
        assertThat(second.tryAcquireAll(List.of("contract:all:a", "contract:all:b", "contract:all:c"),
                LockOptions.tryOnce())).get().satisfies(MultiLockHandle::release);
    }

    @Test
    void aReleaseBeforeHoldAtLeastLeavesTheLockHeldUntilThen() {
        String key = "contract:hold";
        Duration hold = Duration.ofMillis(1200);
        long acquired = System.nanoTime();
        first.acquire(key, LockOptions.tryOnce().withHoldAtLeast(hold)).release();
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).as("right after the release").isEmpty();
        try (LockHandle next = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
            assertThat(System.nanoTime() - acquired).as("the next holder's wait").isGreaterThanOrEqualTo(hold.toNanos());
        }
    }

    @Test
    void aLostLockIsSignalledByIsHeldTheListenerAndTheRelease() throws Exception {
        String key = "contract:lost";
        List<String> lost = new CopyOnWriteArrayList<>();
        first.addLockLostListener((lock, reason) -> lost.add(lock.key()));
        LockHandle handle = first.acquire(key, LockOptions.tryOnce());
        removeLock(key);
        Await.until(() -> !handle.isHeld(), WATCHDOG_LEASE.multipliedBy(3), "isHeld() false after the lock was removed");
        Await.until(() -> lost.contains(key), WATCHDOG_LEASE.multipliedBy(3), "the lost-lock listener told");
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class);
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).get().satisfies(LockHandle::release);
    }

    @Test
    void observersAreToldOfTheWaitTheHoldAndTheRelease() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch released = new CountDownLatch(1);
        second.addObserver(new LockObserver() {
            @Override
            public Acquisition acquiring(LockEvent lock) {
                if (!lock.key().equals("contract:observed")) {
                    return Acquisition.NONE;
                }
                events.add("acquiring " + lock.name() + " " + lock.type());
                return new Acquisition() {
                    @Override
                    public void acquired(Duration waited) {
                        events.add("acquired");
                    }
                };
            }

            @Override
            public void released(LockEvent lock, Duration held) {
                if (lock.key().equals("contract:observed")) {
                    events.add("released");
                    released.countDown();
                }
            }
        });
        second.execute("contract:observed", LockOptions.tryOnce().withName("observed"), handle -> null);
        assertThat(released.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(events).containsExactly("acquiring observed EXCLUSIVE", "acquired", "released");
    }

    @Test
    void diagnosticsListTheHolding() {
        try (LockHandle handle = first.acquire("contract:listed", LockOptions.tryOnce().withName("listed"))) {
            assertThat(first.diagnostics().heldLocks()).anySatisfy(held -> {
                assertThat(held.key()).isEqualTo("contract:listed");
                assertThat(held.name()).isEqualTo("listed");
                assertThat(held.type()).isEqualTo(LockType.EXCLUSIVE);
                assertThat(held.fencingToken()).isEqualTo(handle.fencingToken());
                assertThat(held.renewing()).isTrue();
            });
            assertThat(second.diagnostics().heldLocks()).noneMatch(held -> held.key().equals("contract:listed"));
        }
        assertThat(first.diagnostics().heldLocks()).noneMatch(held -> held.key().equals("contract:listed"));
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
