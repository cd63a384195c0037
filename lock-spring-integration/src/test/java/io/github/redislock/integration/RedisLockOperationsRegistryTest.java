package io.github.redislock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import io.github.redislock.core.LockLostException;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * What a Spring Integration user relies on from a {@code LockRegistry}, on a real Redis: two registries on two lock
 * templates stand for two JVMs.
 */
@WithRedis
class RedisLockOperationsRegistryTest {

    /** Short, so that a lock lost or left by a dead holder shows within a test. */
    private static final Duration LEASE = Duration.ofMillis(600);

    static RedisServerProcess server;

    private JedisConnectionFactory connections;
    private StringRedisTemplate redis;
    private RedisLockTemplate here;
    private RedisLockTemplate there;
    private RedisLockOperationsRegistry registry;
    private RedisLockOperationsRegistry otherJvm;
    private ExecutorService threads;

    @BeforeEach
    void connect() {
        connections = new JedisConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
        connections.afterPropertiesSet();
        connections.start();
        redis = new StringRedisTemplate(connections);
        redis.getRequiredConnectionFactory().getConnection().serverCommands().flushAll();
        here = new RedisLockTemplate(redis, RedisLockConfig.defaults().withWatchdogLease(LEASE));
        there = new RedisLockTemplate(redis, RedisLockConfig.defaults().withWatchdogLease(LEASE));
        registry = new RedisLockOperationsRegistry(here, "orders");
        otherJvm = new RedisLockOperationsRegistry(there, "orders");
        threads = Executors.newCachedThreadPool();
    }

    @AfterEach
    void close() {
        threads.shutdownNow();
        here.close();
        there.close();
        connections.destroy();
    }

    @Test
    void obtainReturnsTheSameLockForTheSameKeyAndTakesOnlyStringKeys() {
        assertThat(registry.obtain("a")).isSameAs(registry.obtain("a")).isNotSameAs(registry.obtain("b"));
        assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("String");
    }

    @Test
    void executeLockedRunsOneHolderAtATimeAcrossThreadsAndClients() throws Exception {
        List<Interval> sections = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> workers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            RedisLockOperationsRegistry locks = i % 2 == 0 ? registry : otherJvm;
            workers.add(threads.submit(() -> {
                for (int j = 0; j < 10; j++) {
                    locks.executeLocked("stock", () -> {
                        long enter = System.nanoTime();
                        Thread.sleep(2);
                        sections.add(new Interval(enter, System.nanoTime()));
                    });
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        assertThat(sections).hasSize(40);
        assertThat(Intervals.maxConcurrency(sections)).as("holders at once").isEqualTo(1);
    }

    @Test
    void theLockIsReentrantAndHeldUntilTheOutermostUnlock() throws Exception {
        Lock lock = registry.obtain("reentrant");
        lock.lock();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        assertThat(otherJvm.obtain("reentrant").tryLock()).as("another client, while held once more").isFalse();
        lock.unlock();
        assertThat(threads.submit(() -> tryLockAndUnlock(otherJvm.obtain("reentrant"))).get())
                .as("another client, after the outermost unlock").isTrue();
    }

    @Test
    void onlyTheHoldingThreadMayUnlock() throws Exception {
        Lock lock = registry.obtain("owned");
        lock.lock();
        try {
            Future<?> unlockByOther = threads.submit(lock::unlock);
            assertThatThrownBy(() -> unlockByOther.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IllegalMonitorStateException.class);
            assertThat(threads.submit(() -> lock.tryLock()).get()).as("another thread of this JVM").isFalse();
        } finally {
            lock.unlock();
        }
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void theFencingTokenOfTheHoldingRisesWithEachHolderAndIsSharedByNestedHoldings() throws Exception {
        Lock lock = registry.obtain("fenced");
        assertThat(registry.fencingToken("fenced")).isEmpty();
        lock.lock();
        long first = registry.fencingToken("fenced").orElseThrow();
        lock.lock();
        assertThat(registry.fencingToken("fenced")).hasValue(first);
        assertThat(threads.submit(() -> registry.fencingToken("fenced")).get()).as("another thread").isEmpty();
        lock.unlock();
        lock.unlock();
        assertThat(registry.fencingToken("fenced")).isEmpty();
        long second = threads.submit(() -> {
            DistributedLock other = otherJvm.obtain("fenced");
            other.lock();
            try {
                return otherJvm.fencingToken("fenced").orElseThrow();
            } finally {
                other.unlock();
            }
        }).get(10, TimeUnit.SECONDS);
        assertThat(second).isGreaterThan(first);
    }

    @Test
    void aLockWithoutTimeToLiveIsRenewedWhileHeldAndOneWithATimeToLiveExpires() throws Exception {
        DistributedLock renewed = registry.obtain("renewed");
        DistributedLock expiring = registry.obtain("expiring");
        renewed.lock();
        expiring.lock(Duration.ofMillis(300));
        Thread.sleep(3 * LEASE.toMillis());
        assertThat(threads.submit(() -> tryLockAndUnlock(otherJvm.obtain("renewed"))).get())
                .as("another client, after three watchdog leases").isFalse();
        assertThat(threads.submit(() -> tryLockAndUnlock(otherJvm.obtain("expiring"))).get())
                .as("another client, after the time-to-live").isTrue();
        registry.renewLock("renewed");
        renewed.unlock();
        assertThatThrownBy(expiring::unlock).isInstanceOf(LockLostException.class)
                .hasMessageContaining("expiring");
    }

    @Test
    void renewLockChecksTheHoldingOfTheCallingThreadAndRenewsATimeToLive() throws Exception {
        assertThatThrownBy(() -> registry.renewLock("unheld")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not held");
        DistributedLock withTtl = registry.obtain("with-ttl");
        withTtl.lock(Duration.ofSeconds(10));
        try {
            registry.renewLock("with-ttl", Duration.ofSeconds(20));
            assertThat(redis.getExpire("redis-lock:{orders:with-ttl}", TimeUnit.MILLISECONDS))
                    .as("the new time-to-live, from now").isGreaterThan(10_000).isLessThanOrEqualTo(20_000);
            registry.renewLock("with-ttl");
            assertThat(redis.getExpire("redis-lock:{orders:with-ttl}", TimeUnit.MILLISECONDS))
                    .as("the time-to-live it was taken with").isGreaterThan(5_000).isLessThanOrEqualTo(10_000);
        } finally {
            withTtl.unlock();
        }
        DistributedLock watched = registry.obtain("watched");
        watched.lock();
        try {
            registry.renewLock("watched", Duration.ofSeconds(20));
            assertThatThrownBy(() -> threads.submit(() -> registry.renewLock("watched")).get())
                    .hasCauseInstanceOf(IllegalStateException.class);
        } finally {
            watched.unlock();
        }
    }

    @Test
    void aLostLockIsNeverSilentANestedTryLockAndTheUnlockThrow() throws Exception {
        DistributedLock lock = registry.obtain("lost");
        lock.lock();
        redis.delete("redis-lock:{orders:lost}"); // as if its lease had run out during a pause
        Thread.sleep(LEASE.toMillis()); // the watchdog's next renewal finds it gone
        assertThatThrownBy(() -> lock.tryLock(100, TimeUnit.MILLISECONDS)).isInstanceOf(LockLostException.class);
        assertThatThrownBy(() -> registry.renewLock("lost")).isInstanceOf(LockLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        assertThat(threads.submit(() -> tryLockAndUnlock(lock)).get()).as("free again").isTrue();
    }

    @Test
    void aWaitingLockCanBeInterrupted() throws Exception {
        DistributedLock held = registry.obtain("interrupted");
        held.lock();
        try {
            CompletableFuture<Thread> waiter = new CompletableFuture<>();
            Future<Throwable> waiting = threads.submit(() -> {
                waiter.complete(Thread.currentThread());
                try {
                    otherJvm.obtain("interrupted").lockInterruptibly();
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            Thread.sleep(200);
            waiter.get().interrupt();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        } finally {
            held.unlock();
        }
    }

    @Test
    void expireUnusedOlderThanDropsLocksNotHeldAndKeepsHeldOnes() throws Exception {
        DistributedLock held = registry.obtain("held");
        DistributedLock unused = registry.obtain("unused");
        held.lock();
        try {
            Thread.sleep(20);
            registry.expireUnusedOlderThan(10);
            assertThat(registry.obtain("held")).isSameAs(held);
            assertThat(registry.obtain("unused")).isNotSameAs(unused);
        } finally {
            held.unlock();
        }
    }

    @Test
    void aRegistryKeyKeepsRegistriesApartAndNoRegistryKeySharesTheAnnotationsKeys() throws Exception {
        RedisLockOperationsRegistry invoices = new RedisLockOperationsRegistry(there, "invoices");
        RedisLockOperationsRegistry plain = new RedisLockOperationsRegistry(there);
        Lock lock = registry.obtain("42");
        lock.lock();
        try {
            assertThat(threads.submit(() -> tryLockAndUnlock(invoices.obtain("42"))).get()).isTrue();
            assertThat(threads.submit(() -> tryLockAndUnlock(plain.obtain("orders:42"))).get())
                    .as("the engine's lock of 'orders:42'").isFalse();
        } finally {
            lock.unlock();
        }
    }

    private static boolean tryLockAndUnlock(Lock lock) {
        if (!lock.tryLock()) {
            return false;
        }
        lock.unlock();
        return true;
    }
}
