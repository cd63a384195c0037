package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.stream.IntStream;

import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The read/write lock against a real redis-server: readers share, a writer excludes everyone, downgrade, refused
 * upgrade, writers not starved, each reader's own lease, reentrancy, fencing tokens. Each client works on threads
 * of its own ({@link Actor}), as the JUC locks must be released by the thread that took them.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class RedisReadWriteLockTest {

    static RedisServerProcess server;
    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static RedisLockTemplate third;
    static StringRedisTemplate redis;

    @PerTest
    String key;
    final List<Actor> actors = new ArrayList<>();

    @AfterEach
    void stopActors() {
        actors.forEach(Actor::close);
    }

    @Test
    void lockInterruptiblyOnAnInterruptedThreadThrowsAtOnceAndTakesNothing() {
        ReadWriteLock lock = first.readWriteLock(key);
        for (Lock side : List.of(lock.readLock(), lock.writeLock())) {
            Thread.currentThread().interrupt();
            assertThatThrownBy(side::lockInterruptibly).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).as("the flag is cleared, as ReentrantLock does").isFalse();
        }
        // nothing was taken: another client's writer gets the lock at once
        Lock writer = second.readWriteLock(key).writeLock();
        assertThat(writer.tryLock()).isTrue();
        writer.unlock();
    }

    @Test
    void twoReadersOfDifferentClientsReadAtTheSameTime() throws Exception {
        Actor a = actor(first);
        Actor b = actor(second);
        assertThat(a.call(() -> a.lock.readLock().tryLock())).isTrue();
        assertThat(b.call(() -> b.lock.readLock().tryLock())).isTrue();
        assertThat(redis.opsForZSet().size("redis-lock:{" + key + "}:rw:readers")).isEqualTo(2);
        a.run(() -> a.lock.readLock().unlock());
        b.run(() -> b.lock.readLock().unlock());
        assertThat(redis.hasKey("redis-lock:{" + key + "}:rw:readers")).isFalse();
    }

    @Test
    void noWriterOverlapsAnyReaderOrWriterOfTwelveThreadsOverThreeClients() throws Exception {
        List<RedisLockTemplate> templates = List.of(first, second, third);
        List<ReadWriteLock> locks = IntStream.range(0, 12).<ReadWriteLock>mapToObj(t -> templates.get(t % 3).readWriteLock(key)).toList();
        List<ReadWriteSections.Section> sections = ReadWriteSections.run(locks, 20, 4);
        assertThat(sections).hasSize(240);
        ReadWriteSections.assertNoSectionOverlapsAWriter(sections);
    }

    @Test
    void theWriterMayTakeTheReadLockReleaseTheWriteLockAndReadOnWhileOthersJoinButNoWriter() throws Exception {
        Actor a = actor(first);
        Actor b = actor(second);
        a.run(() -> {
            a.lock.writeLock().lock();
            a.lock.readLock().lock();
        });
        assertThat(b.call(() -> b.lock.readLock().tryLock())).as("a reader while the write lock is held").isFalse();
        a.run(() -> a.lock.writeLock().unlock());
        assertThat(b.call(() -> b.lock.readLock().tryLock())).as("a reader beside the downgraded one").isTrue();
        b.run(() -> b.lock.readLock().unlock());
        assertThat(b.call(() -> b.lock.writeLock().tryLock())).as("a writer while the downgraded one reads").isFalse();
        a.run(() -> a.lock.readLock().unlock());
        assertThat(b.call(() -> b.lock.writeLock().tryLock())).isTrue();
        b.run(() -> b.lock.writeLock().unlock());
    }

    @Test
    void aReaderAskingForTheWriteLockIsRefusedAtOnceWithTheReasonInsteadOfWaitingForever() throws Exception {
        Actor a = actor(first);
        a.run(() -> a.lock.readLock().lock());
        long start = System.nanoTime();
        Future<?> upgrade = a.submit(() -> {
            a.lock.writeLock().lock(); // waits without bound if not refused
            return null;
        });
        assertThatThrownBy(() -> upgrade.get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("upgrading is not supported")
                .hasMessageContaining("Release the read lock");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        assertThatThrownBy(() -> a.call(() -> a.lock.writeLock().tryLock(2, TimeUnit.SECONDS)))
                .hasCauseInstanceOf(IllegalMonitorStateException.class);
        a.run(() -> a.lock.readLock().unlock());
        assertThat(actor(second).call(() -> second.readWriteLock(key).writeLock().tryLock()))
                .as("the refused upgrade left nothing behind").isTrue();
    }

    @Test
    void aWaitingWriterKeepsNewReadersOutAndGetsTheLockWhenTheReadersLeave() throws Exception {
        Actor reader = actor(first);
        Actor writer = actor(second);
        Actor late = actor(third);
        reader.run(() -> reader.lock.readLock().lock());
        Future<Boolean> writing = writer.submit(() -> writer.lock.writeLock().tryLock(20, TimeUnit.SECONDS));
        awaitKey("redis-lock:{" + key + "}:rw:writers-waiting");
        assertThat(late.call(() -> late.lock.readLock().tryLock(300, TimeUnit.MILLISECONDS)))
                .as("a new reader while a writer waits").isFalse();
        long released = System.nanoTime();
        reader.run(() -> reader.lock.readLock().unlock());
        assertThat(writing.get(10, TimeUnit.SECONDS)).isTrue();
        // woken by the release, not by a re-check at the reader's 30s lease
        assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(1));
        Future<Boolean> lateReading = late.submit(() -> late.lock.readLock().tryLock(10, TimeUnit.SECONDS));
        Thread.sleep(100);
        assertThat(lateReading).isNotDone();
        writer.run(() -> writer.lock.writeLock().unlock());
        assertThat(lateReading.get(10, TimeUnit.SECONDS)).isTrue();
        late.run(() -> late.lock.readLock().unlock());
    }

    @Test
    void aWriterThatGivesUpWaitingLetsTheReadersItHeldBackIn() throws Exception {
        Actor reader = actor(first);
        Actor writer = actor(second);
        Actor late = actor(third);
        reader.run(() -> reader.lock.readLock().lock());
        Future<Boolean> writing = writer.submit(() -> writer.lock.writeLock().tryLock(500, TimeUnit.MILLISECONDS));
        awaitKey("redis-lock:{" + key + "}:rw:writers-waiting");
        Future<Boolean> lateReading = late.submit(() -> late.lock.readLock().tryLock(10, TimeUnit.SECONDS));
        assertThat(writing.get(10, TimeUnit.SECONDS)).isFalse();
        long gaveUp = System.nanoTime();
        assertThat(lateReading.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - gaveUp)).isLessThan(Duration.ofSeconds(1));
        late.run(() -> late.lock.readLock().unlock());
        reader.run(() -> reader.lock.readLock().unlock());
    }

    @Test
    void aCrashedReaderFreesOnlyItsOwnShareWhenItsLeaseEnds() throws Exception {
        RedisLockConfig shortLease = RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(600));
        RedisLockTemplate crashing = new RedisLockTemplate(clients.redisTemplate(), shortLease);
        Actor crashed = actor(crashing);
        Actor healthy = actor(clients.lockTemplate(shortLease));
        Actor writer = actor(second);
        crashed.run(() -> crashed.lock.readLock().lock());
        healthy.run(() -> healthy.lock.readLock().lock());
        crashing.close(); // no release, no renewal: as if its JVM died

        Thread.sleep(1500); // well past the crashed reader's lease, over several renewals of the healthy one's
        assertThat(writer.call(() -> writer.lock.writeLock().tryLock()))
                .as("a writer while the healthy reader still reads").isFalse();
        assertThat(redis.opsForZSet().size("redis-lock:{" + key + "}:rw:readers")).isEqualTo(1);

        long released = System.nanoTime();
        healthy.run(() -> healthy.lock.readLock().unlock()); // throws LockLostException if its share had been freed
        assertThat(writer.call(() -> writer.lock.writeLock().tryLock(5, TimeUnit.SECONDS))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(1));
        writer.run(() -> writer.lock.writeLock().unlock());
    }

    @Test
    void aCrashedWriterFreesTheLockWhenItsLeaseEnds() throws Exception {
        RedisLockTemplate crashing = new RedisLockTemplate(clients.redisTemplate(),
                RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(500)));
        Actor crashed = actor(crashing);
        Actor reader = actor(second);
        crashed.run(() -> crashed.lock.writeLock().lock());
        crashing.close();
        assertThat(reader.call(() -> reader.lock.readLock().tryLock())).isFalse();
        assertThat(reader.call(() -> reader.lock.readLock().tryLock(5, TimeUnit.SECONDS))).isTrue();
        reader.run(() -> reader.lock.readLock().unlock());
    }

    @Test
    void bothSidesAreReentrantAndFreedWhenTheCountReturnsToZero() throws Exception {
        Actor a = actor(first);
        Actor b = actor(second);
        a.run(() -> {
            a.lock.readLock().lock();
            a.lock.readLock().lock();
            a.lock.readLock().unlock();
        });
        assertThat(b.call(() -> b.lock.writeLock().tryLock())).as("a writer while one read hold remains").isFalse();
        a.run(() -> a.lock.readLock().unlock());
        assertThatThrownBy(() -> a.run(() -> a.lock.readLock().unlock()))
                .hasCauseInstanceOf(IllegalMonitorStateException.class);

        b.run(() -> {
            b.lock.writeLock().lock();
            b.lock.writeLock().lock();
            b.lock.writeLock().unlock();
        });
        assertThat(a.call(() -> a.lock.readLock().tryLock())).as("a reader while one write hold remains").isFalse();
        b.run(() -> b.lock.writeLock().unlock());
        assertThat(a.call(() -> a.lock.readLock().tryLock())).isTrue();
        a.run(() -> a.lock.readLock().unlock());
    }

    @Test
    void writeTokensRiseAndReadersShareTheTokenOfTheirReadEpoch() throws Exception {
        LockOptions once = LockOptions.tryOnce();
        long firstWrite;
        try (MultiLockHandle w = first.acquireAll(List.of(key), once, LockType.WRITE)) {
            firstWrite = w.fencingToken(key);
        }
        long readToken;
        try (MultiLockHandle r1 = first.acquireAll(List.of(key), once, LockType.READ)) {
            readToken = r1.fencingToken(key);
            long joined = actor(second).call(() -> {
                try (MultiLockHandle r2 = second.acquireAll(List.of(key), once, LockType.READ)) {
                    return r2.fencingToken(key);
                }
            });
            assertThat(joined).isEqualTo(readToken);
        }
        long secondWrite;
        try (MultiLockHandle w = second.acquireAll(List.of(key), once, LockType.WRITE)) {
            secondWrite = w.fencingToken(key);
        }
        assertThat(readToken).isGreaterThan(firstWrite);
        assertThat(secondWrite).isGreaterThan(readToken);
    }

    @Test
    void theWatchdogRenewsAReaderAndAWriterPastManyLeases() throws Exception {
        // a lease long enough for a renewal to be answered on a loaded machine, held for several of them
        RedisLockConfig shortLease = RedisLockConfig.defaults().withWatchdogLease(Duration.ofSeconds(1));
        Actor reader = actor(clients.lockTemplate(shortLease));
        Actor other = actor(second);
        reader.run(() -> reader.lock.readLock().lock());
        Thread.sleep(2500);
        assertThat(other.call(() -> other.lock.writeLock().tryLock())).isFalse();
        reader.run(() -> {
            reader.lock.readLock().unlock();
            reader.lock.writeLock().lock();
        });
        Thread.sleep(2500);
        assertThat(other.call(() -> other.lock.readLock().tryLock())).isFalse();
        reader.run(() -> reader.lock.writeLock().unlock()); // throws LockLostException if it had run out
    }

    @Test
    void aReadShareRemovedFromRedisIsFoundLostByTheWatchdogAndItsReleaseSaysSo() throws Exception {
        RedisLockTemplate template = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(300)));
        CompletableFuture<String> told = new CompletableFuture<>();
        template.addLockLostListener((lock, reason) -> told.complete(lock.key() + ": " + reason));
        Actor reader = actor(template);
        reader.run(() -> reader.lock.readLock().lock());
        redis.delete("redis-lock:{" + key + "}:rw:readers");
        assertThat(told.get(5, TimeUnit.SECONDS)).startsWith(key + ": ").contains("read lease gone");
        assertThatThrownBy(() -> reader.run(() -> reader.lock.readLock().unlock()))
                .hasCauseInstanceOf(LockLostException.class);
    }

    @Test
    void readAndWriteLocksAreApartFromTheExclusiveLockOfTheSameKey() throws Exception {
        try (LockHandle exclusive = first.acquire(key, LockOptions.tryOnce())) {
            assertThat(actor(second).call(() -> second.readWriteLock(key).writeLock().tryLock())).isTrue();
        }
    }

    private void awaitKey(String redisKey) throws InterruptedException {
        Await.until(() -> Boolean.TRUE.equals(redis.hasKey(redisKey)), Duration.ofSeconds(10), redisKey + " to appear");
    }

    private Actor actor(RedisLockTemplate template) {
        Actor actor = new Actor(template.readWriteLock(key));
        actors.add(actor);
        return actor;
    }

    /** One thread of one client, and its view of the test's lock. */
    static final class Actor implements AutoCloseable {

        final ReadWriteLock lock;
        private final ExecutorService thread = Executors.newSingleThreadExecutor();

        Actor(ReadWriteLock lock) {
            this.lock = lock;
        }

        <T> Future<T> submit(Callable<T> action) {
            return thread.submit(action);
        }

        <T> T call(Callable<T> action) throws Exception {
            return submit(action).get(30, TimeUnit.SECONDS);
        }

        void run(ThrowingRunnable action) throws Exception {
            call(() -> {
                action.run();
                return null;
            });
        }

        @Override
        public void close() {
            thread.shutdownNow();
        }
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
