package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.stream.IntStream;

import io.github.redislock.test.Await;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
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

    @PerTest
    String key;
    @PerTest
    ExecutorService pool;

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
                        LockType.READ)) {
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
        try (MultiLockHandle other = second.acquireAll(List.of(key), LockOptions.tryOnce(), LockType.READ)) {
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
        // the writer's notice closes the share well before a renewal (a third of the 30 s lease) would
        Await.until(() -> first.readShareReaders(key) == 0, Duration.ofSeconds(5), "the writer's notice to close the share");
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
        List<ReadWriteLock> locks = IntStream.range(0, 12).<ReadWriteLock>mapToObj(t -> templates.get(t % 2).readWriteLock(key)).toList();
        List<ReadWriteSections.Section> sections = ReadWriteSections.run(locks, 25, 5);
        assertThat(sections).hasSize(300);
        ReadWriteSections.assertNoSectionOverlapsAWriter(sections);
        List<ReadWriteSections.Section> readers = sections.stream().filter(s -> !s.writer()).toList();
        assertThat(Intervals.maxConcurrency(readers, ReadWriteSections.Section::enter, ReadWriteSections.Section::exit))
                .as("readers read together").isGreaterThan(1);
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
        Await.until(template::isListening, Duration.ofSeconds(10), "the client to subscribe");
    }

    private void awaitKey(String redisKey) throws InterruptedException {
        Await.until(() -> Boolean.TRUE.equals(redis.hasKey(redisKey)), Duration.ofSeconds(10), redisKey + " to appear");
    }
}
