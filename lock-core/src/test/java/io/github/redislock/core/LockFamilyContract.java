package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.redislock.test.Await;
import io.github.redislock.test.Concurrently;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.PerTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The fair, read/write and semaphore locks on one Redis deployment, each used by threads of two or three clients
 * (a connection pool each, as separate JVMs would be): exclusion proven by a non-atomic read-modify-write in Redis and by the
 * recorded enter/exit of every critical section, fencing tokens, and waiters on the other client woken by a release.
 * A subclass names the deployment ({@code @WithRedisCluster}, {@code @WithRedisSentinel}); the deployment and the
 * clients are started once for the class.
 */
@ExtendWith(RedisClientsExtension.class)
abstract class LockFamilyContract {

    static final LockOptions THIRTY_SECONDS = LockOptions.waitFor(Duration.ofSeconds(30));

    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static RedisLockTemplate third;
    static StringRedisTemplate redis;

    @PerTest
    ExecutorService pool;

    /** One critical section, by this JVM's clock: a later section of another holder must not start before it ends. */
    record Section(long enter, long exit, long token, boolean exclusive) {

        boolean endsBefore(Section other) {
            return exit < other.enter;
        }

        boolean overlaps(Section other) {
            return enter < other.exit && other.enter < exit;
        }
    }

    @Test
    void fairLockThreadsOfTwoClientsNeverOverlapAndEachHolderGetsAHigherToken() throws Exception {
        String key = "fair-exclusion";
        String counter = "{" + key + "}:counter";
        redis.opsForValue().set(counter, "0");
        List<Section> sections = Collections.synchronizedList(new ArrayList<>());
        Concurrently.run(8, 10, thread -> {
            try (LockHandle handle = client(thread).fairLock(key).acquire(THIRTY_SECONDS)) {
                long enter = System.nanoTime();
                incrementNonAtomically(counter);
                sections.add(new Section(enter, System.nanoTime(), handle.fencingToken(), true));
            }
        });
        assertThat(redis.opsForValue().get(counter)).as("no update lost").isEqualTo(Integer.toString(sections.size()));
        assertExclusiveSectionsNeverOverlapAndTokensRise(sections);
    }

    @Test
    void readWriteLockWritersOverlapNobodyAcrossTwoClientsAndEveryWriterGetsAHigherToken() throws Exception {
        String key = "rw-exclusion";
        String counter = "{" + key + "}:counter";
        redis.opsForValue().set(counter, "0");
        List<Section> sections = Collections.synchronizedList(new ArrayList<>());
        Concurrently.run(8, 10, thread -> {
            boolean write = ThreadLocalRandom.current().nextInt(3) == 0;
            try (MultiLockHandle handle = client(thread).acquireAll(List.of(key), THIRTY_SECONDS,
                    write ? LockType.WRITE : LockType.READ)) {
                long enter = System.nanoTime();
                if (write) {
                    incrementNonAtomically(counter);
                } else {
                    redis.opsForValue().get(counter);
                    Thread.sleep(1);
                }
                sections.add(new Section(enter, System.nanoTime(), handle.fencingToken(key), write));
            }
        });
        long writes = sections.stream().filter(Section::exclusive).count();
        assertThat(writes).as("writers ran").isPositive();
        assertThat(redis.opsForValue().get(counter)).as("no write lost").isEqualTo(Long.toString(writes));
        for (Section writer : sections) {
            if (!writer.exclusive()) {
                continue;
            }
            for (Section other : sections) {
                if (other != writer) {
                    assertThat(writer.overlaps(other)).as("a section overlapping a writer's").isFalse();
                    if (other.endsBefore(writer)) {
                        assertThat(writer.token()).as("a writer's token above an earlier holder's").isGreaterThan(other.token());
                    } else {
                        assertThat(other.token()).as("a holder's token above an earlier writer's").isGreaterThan(writer.token());
                    }
                }
            }
        }
    }

    @Test
    void readersOfTwoClientsAreInsideTogetherAndAreWokenTogetherWhenTheWriterLeaves() throws Exception {
        String key = "rw-shared";
        MultiLockHandle writing = first.acquireAll(List.of(key), LockOptions.tryOnce(), LockType.WRITE);
        CountDownLatch bothInside = new CountDownLatch(2);
        List<Future<Long>> readers = new ArrayList<>();
        for (RedisLockTemplate client : List.of(second, third)) {
            readers.add(pool.submit(() -> {
                try (MultiLockHandle reading = client.acquireAll(List.of(key), THIRTY_SECONDS, LockType.READ)) {
                    bothInside.countDown();
                    // returns only while the other client's reader is inside too
                    assertThat(bothInside.await(10, TimeUnit.SECONDS)).as("the other reader came in").isTrue();
                    return reading.fencingToken(key);
                }
            }));
        }
        awaitUntil(() -> Long.valueOf(2).equals(redis.opsForZSet().zCard("redis-lock:{" + key + "}:rw:waiters")),
                "both readers waiting");
        long releasedAt = System.nanoTime();
        writing.release();
        assertThat(bothInside.await(10, TimeUnit.SECONDS)).isTrue();
        long wokenMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
        System.out.println(getClass().getSimpleName() + ": two readers woken " + wokenMs + " ms after the writer left");
        assertThat(wokenMs).as("woken by the release, not a re-check at the lease's end").isLessThan(2000);
        long writeToken = writing.fencingToken(key);
        assertThat(readers.get(0).get(10, TimeUnit.SECONDS)).isEqualTo(readers.get(1).get(10, TimeUnit.SECONDS))
                .as("one read epoch after the writer").isGreaterThan(writeToken);
    }

    @Test
    void semaphoreHoldersOfTwoClientsNeverExceedThePermitsAndEachAcquisitionGetsItsOwnRisingToken() throws Exception {
        String key = "semaphore-exclusion";
        int permits = 3;
        List<Section> sections = Collections.synchronizedList(new ArrayList<>());
        List<List<Long>> tokensPerThread = Collections.synchronizedList(new ArrayList<>());
        Concurrently.run(8, 8, new Concurrently.Call() {
            final ThreadLocal<List<Long>> mine = ThreadLocal.withInitial(() -> {
                List<Long> tokens = new ArrayList<>();
                tokensPerThread.add(tokens);
                return tokens;
            });

            @Override
            public void run(int thread) throws Exception {
                try (PermitHandle permit = client(thread).semaphore(key, permits).acquire(THIRTY_SECONDS)) {
                    long enter = System.nanoTime();
                    Thread.sleep(15); // widen the window a fourth holder would need
                    sections.add(new Section(enter, System.nanoTime(), permit.fencingToken(), false));
                    mine.get().add(permit.fencingToken());
                }
            }
        });
        // never more than the permits; more than one at once shows the permits are shared (all three at once
        // depends on the scheduling of a loaded machine, so it is not asserted)
        assertThat(maxConcurrency(sections)).as("holders at once").isLessThanOrEqualTo(permits).isGreaterThan(1);
        assertThat(sections.stream().map(Section::token)).as("a token per acquisition").doesNotHaveDuplicates();
        for (List<Long> tokens : tokensPerThread) {
            assertThat(tokens).as("one thread's tokens, acquisition after acquisition").isSorted();
        }
        assertThat(first.semaphore(key, permits).availablePermits()).as("every permit returned").isEqualTo(permits);
    }

    @Test
    void aFairWaiterOnTheOtherClientIsHandedTheLockByTheReleaseWithAHigherToken() throws Exception {
        String key = "fair-wake";
        LockHandle held = first.fairLock(key).acquire(LockOptions.tryOnce());
        Future<long[]> waiter = pool.submit(() -> {
            try (LockHandle handle = second.fairLock(key).acquire(THIRTY_SECONDS)) {
                return new long[] {System.nanoTime(), handle.fencingToken()};
            }
        });
        awaitUntil(() -> Long.valueOf(1).equals(redis.opsForZSet().zCard("redis-lock:{" + key + "}:queue")), "the waiter queued");
        long releasedAt = System.nanoTime();
        held.release();
        long[] acquired = waiter.get(10, TimeUnit.SECONDS);
        long handOverMs = TimeUnit.NANOSECONDS.toMillis(acquired[0] - releasedAt);
        System.out.println(getClass().getSimpleName() + ": fair hand-over to the other client took " + handOverMs + " ms");
        assertThat(handOverMs).as("woken by the release, not a re-check").isLessThan(1000);
        assertThat(acquired[1]).isGreaterThan(held.fencingToken());
    }

    @Test
    void aSemaphoreWaiterOnTheOtherClientIsWokenByAReleaseWithAHigherToken() throws Exception {
        String key = "semaphore-wake";
        PermitHandle held = first.semaphore(key, 1).acquire(LockOptions.tryOnce());
        Future<long[]> waiter = pool.submit(() -> {
            try (PermitHandle permit = second.semaphore(key, 1).acquire(THIRTY_SECONDS)) {
                return new long[] {System.nanoTime(), permit.fencingToken()};
            }
        });
        awaitUntil(() -> Long.valueOf(1).equals(redis.opsForZSet().zCard("redis-lock:{" + key + "}:semaphore:waiters")),
                "the waiter registered");
        long releasedAt = System.nanoTime();
        held.release();
        long[] acquired = waiter.get(10, TimeUnit.SECONDS);
        long wokenMs = TimeUnit.NANOSECONDS.toMillis(acquired[0] - releasedAt);
        System.out.println(getClass().getSimpleName() + ": semaphore waiter on the other client woken in " + wokenMs + " ms");
        assertThat(wokenMs).as("woken by the release, not a re-check at the lease's end").isLessThan(1000);
        assertThat(acquired[1]).isGreaterThan(held.fencingToken());
    }

    /** The client of {@code thread}: threads alternate between the two. */
    static RedisLockTemplate client(int thread) {
        return thread % 2 == 0 ? first : second;
    }

    /** A read, a pause and a write: two holders at once would lose an update. */
    static void incrementNonAtomically(String counter) throws InterruptedException {
        long value = Long.parseLong(redis.opsForValue().get(counter));
        Thread.sleep(1);
        redis.opsForValue().set(counter, Long.toString(value + 1));
    }

    static void assertExclusiveSectionsNeverOverlapAndTokensRise(List<Section> sections) {
        List<Section> byEntry = new ArrayList<>(sections);
        byEntry.sort(Comparator.comparingLong(Section::enter));
        for (int i = 1; i < byEntry.size(); i++) {
            Section before = byEntry.get(i - 1);
            Section after = byEntry.get(i);
            assertThat(before.endsBefore(after)).as("section %d entered before section %d left", i, i - 1).isTrue();
            assertThat(after.token()).as("token of section %d", i).isGreaterThan(before.token());
        }
    }

    static int maxConcurrency(List<Section> sections) {
        return Intervals.maxConcurrency(sections, Section::enter, Section::exit);
    }

    static void awaitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        Await.until(condition, Duration.ofSeconds(10), what);
    }
}
