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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import io.github.redislock.test.Intervals;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One read share per client against a real redis-server: the reading threads of a client share one reader entry
 * in Redis, a waiting writer (of any client) stops them joining it, a writer never overlaps a reader, a share lost
 * in Redis is reported to every reader in it, and a crashed client frees only its own share.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class ReadShareTest {

    static RedisServerProcess server;
    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    String key;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void uniqueKey(TestInfo test) {
        key = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void stopThreads() {
        pool.shutdownNow();
    }

    private String readersKey() {
        return "redis-lock:{" + key + "}:rw:readers";
    }

    private long readerEntries() {
        Long size = redis.opsForZSet().size(readersKey());
        return size == null ? 0 : size;
    }

    @Test
    void readingThreadsOfOneClientShareOneReaderEntryAndTheTokenOfTheirReadEpoch() throws Exception {
        int threads = 6;
        CountDownLatch allIn = new CountDownLatch(threads);
        CountDownLatch leave = new CountDownLatch(1);
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<Future<?>> readers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            readers.add(pool.submit(() -> {
                try (MultiLockHandle read = first.acquireAll(List.of(key), LockOptions.waitFor(Duration.ofSeconds(10)),
                        LockMode.READ)) {
                    tokens.add(read.fencingToken(key));
                    allIn.countDown();
                    leave.await();
                }
                return null;
            }));
        }
        assertThat(allIn.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(readerEntries()).as("one entry for the six reading threads").isEqualTo(1);
        assertThat(tokens).hasSize(threads).containsOnly(tokens.get(0));

        // another client reads in the same epoch with an entry of its own
        try (MultiLockHandle other = second.acquireAll(List.of(key), LockOptions.tryOnce(), LockMode.READ)) {
            assertThat(readerEntries()).isEqualTo(2);
            assertThat(other.fencingToken(key)).isEqualTo(tokens.get(0));
        }
        leave.countDown();
        for (Future<?> reader : readers) {
            reader.get(10, TimeUnit.SECONDS);
        }
        assertThat(redis.hasKey(readersKey())).as("the last reader released the share").isFalse();
        Lock writer = second.readWriteLock(key).writeLock();
        assertThat(writer.tryLock()).isTrue();
        writer.unlock();
    }

    @Test
    void aWriterWaitingInAnotherClientStopsThisClientsThreadsJoiningItsShare() throws Exception {
        ReadWriteLock mine = first.readWriteLock(key);
        ReadWriteLock theirs = second.readWriteLock(key);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch reading = new CountDownLatch(1);
        Future<?> holder = pool.submit(() -> {
            mine.readLock().lock();
            try {
                reading.countDown();
                release.await();
            } finally {
                mine.readLock().unlock();
            }
            return null;
        });
        assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
        awaitListening(first); // the notice reaches a client once its subscription is up
        Future<Boolean> writing = pool.submit(() -> {
            boolean locked = theirs.writeLock().tryLock(20, TimeUnit.SECONDS);
            if (locked) {
                Thread.sleep(200);
                theirs.writeLock().unlock();
            }
            return locked;
        });
        awaitKey("redis-lock:{" + key + "}:rw:writers-waiting");
        // the share is still held in Redis, but a writer waits: a new thread of this client must not join it
        Future<Boolean> late = pool.submit(() -> {
            boolean locked = mine.readLock().tryLock(300, TimeUnit.MILLISECONDS);
            if (locked) {
                mine.readLock().unlock();
            }
            return locked;
        });
        assertThat(late.get(10, TimeUnit.SECONDS)).as("a new reader while a writer waits").isFalse();
        release.countDown();
        holder.get(10, TimeUnit.SECONDS);
        assertThat(writing.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aWaiterWhoseNoticeWasLostStopsThreadsJoiningAtTheShareNextRenewal() throws Exception {
        RedisLockTemplate template = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(600)));
        ReadWriteLock lock = template.readWriteLock(key);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch reading = new CountDownLatch(1);
        Future<?> holder = pool.submit(() -> {
            lock.readLock().lock();
            try {
                reading.countDown();
                release.await();
            } finally {
                lock.readLock().unlock();
            }
            return null;
        });
        assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
        // a writer waits, and its notice never reached this client
        redis.opsForZSet().add("redis-lock:{" + key + "}:rw:writers-waiting", "someone-else:1:1",
                System.currentTimeMillis() + 60_000);
        Thread.sleep(600); // a renewal is due every third of the 600 ms lease, sent within half of it
        Future<Boolean> late = pool.submit(() -> {
            boolean locked = lock.readLock().tryLock(200, TimeUnit.MILLISECONDS);
            if (locked) {
                lock.readLock().unlock();
            }
            return locked;
        });
        assertThat(late.get(10, TimeUnit.SECONDS)).as("a new reader after the renewal reported the writer").isFalse();
        redis.delete("redis-lock:{" + key + "}:rw:writers-waiting");
        release.countDown();
        holder.get(10, TimeUnit.SECONDS);
        Future<Boolean> after = pool.submit(() -> {
            boolean locked = lock.readLock().tryLock(5, TimeUnit.SECONDS);
            if (locked) {
                lock.readLock().unlock();
            }
            return locked;
        });
        assertThat(after.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void noWriterOverlapsAnyReaderOrWriterOfSixThreadsInEachOfTwoClientsWhileReadersOverlap() throws Exception {
        List<RedisLockTemplate> templates = List.of(first, second);
        List<long[]> sections = Collections.synchronizedList(new ArrayList<>()); // {enter, exit, 1 if writer}
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 12; t++) {
            ReadWriteLock lock = templates.get(t % 2).readWriteLock(key);
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 25; i++) {
                    boolean write = ThreadLocalRandom.current().nextInt(5) == 0;
                    Lock side = write ? lock.writeLock() : lock.readLock();
                    if (!side.tryLock(30, TimeUnit.SECONDS)) {
                        throw new AssertionError("not acquired within 30s");
                    }
                    long enter = System.nanoTime();
                    Thread.sleep(2); // widen the window an overlapping holder would need
                    long exit = System.nanoTime();
                    side.unlock();
                    sections.add(new long[] {enter, exit, write ? 1 : 0});
                }
                return null;
            }));
        }
        for (Future<?> future : futures) {
            future.get(120, TimeUnit.SECONDS);
        }
        assertThat(sections).hasSize(300);
        List<long[]> writers = sections.stream().filter(s -> s[2] == 1).toList();
        assertThat(writers).isNotEmpty();
        for (long[] writer : writers) {
            for (long[] other : sections) {
                if (other != writer) {
                    assertThat(other[1] <= writer[0] || other[0] >= writer[1])
                            .as("a section overlapping a writer's").isTrue();
                }
            }
        }
        List<long[]> readers = sections.stream().filter(s -> s[2] == 0).toList();
        assertThat(Intervals.maxConcurrency(readers, s -> s[0], s -> s[1])).as("readers read together").isGreaterThan(1);
    }

    @Test
    void aShareRemovedFromRedisIsReportedLostToEveryReaderInIt() throws Exception {
        RedisLockTemplate template = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(300)));
        List<String> told = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> firstNotice = new CompletableFuture<>();
        template.addLockLostListener((lock, reason) -> {
            told.add(reason);
            firstNotice.complete(null);
        });
        ReadWriteLock lock = template.readWriteLock(key);
        int threads = 3;
        CountDownLatch allIn = new CountDownLatch(threads);
        CountDownLatch lost = new CountDownLatch(1);
        List<Future<?>> readers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            readers.add(pool.submit(() -> {
                lock.readLock().lock();
                allIn.countDown();
                lost.await();
                lock.readLock().unlock();
                return null;
            }));
        }
        assertThat(allIn.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(readerEntries()).isEqualTo(1);
        redis.delete(readersKey());
        firstNotice.get(5, TimeUnit.SECONDS);
        lost.countDown();
        for (Future<?> reader : readers) {
            assertThatThrownBy(() -> reader.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class);
        }
        assertThat(told).hasSize(1).allSatisfy(reason -> assertThat(reason).contains("read lease gone"));
    }

    @Test
    void aCrashedClientFreesOnlyItsOwnShareAndTheOtherClientsReadersReadOn() throws Exception {
        RedisLockConfig shortLease = RedisLockConfig.defaults().withWatchdogLease(Duration.ofSeconds(1));
        RedisLockTemplate crashing = new RedisLockTemplate(clients.redisTemplate(), shortLease);
        RedisLockTemplate healthy = clients.lockTemplate(shortLease);
        CountDownLatch allIn = new CountDownLatch(4);
        CountDownLatch leave = new CountDownLatch(1);
        for (RedisLockTemplate template : List.of(crashing, healthy)) {
            ReadWriteLock lock = template.readWriteLock(key);
            for (int t = 0; t < 2; t++) {
                pool.submit(() -> {
                    lock.readLock().lock();
                    allIn.countDown();
                    leave.await();
                    if (template == healthy) {
                        lock.readLock().unlock(); // throws LockLostException if its share had been freed
                    }
                    return null;
                });
            }
        }
        assertThat(allIn.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(readerEntries()).isEqualTo(2);
        crashing.close(); // no release, no renewal: as if its JVM died

        Thread.sleep(2500); // well past the crashed share's lease, over several renewals of the healthy one
        Lock writer = second.readWriteLock(key).writeLock();
        assertThat(pool.submit(() -> writer.tryLock()).get(10, TimeUnit.SECONDS))
                .as("a writer while the healthy client still reads").isFalse();
        assertThat(readerEntries()).as("the crashed client's share is gone, the healthy one's kept").isEqualTo(1);
        leave.countDown();
        Future<Boolean> writing = pool.submit(() -> {
            boolean locked = writer.tryLock(5, TimeUnit.SECONDS);
            if (locked) {
                writer.unlock();
            }
            return locked;
        });
        assertThat(writing.get(10, TimeUnit.SECONDS)).isTrue();
    }

    private static void awaitListening(RedisLockTemplate template) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!template.isListening()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("the client did not subscribe");
            }
            Thread.sleep(5);
        }
    }

    private void awaitKey(String redisKey) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Boolean.TRUE.equals(redis.hasKey(redisKey))) {
            if (System.nanoTime() > end) {
                throw new AssertionError(redisKey + " did not appear");
            }
            Thread.sleep(5);
        }
    }
}
