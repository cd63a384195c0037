package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@code redis-lock.replica-ack} on a real master with a real replica (and three sentinels): each lock type's
 * acquisition waits for the replica, and with the replica paused (SIGSTOP) it fails naming the cause and leaves
 * nothing held in Redis.
 */
@WithRedisSentinel
@ExtendWith(RedisClientsExtension.class)
class ReplicaAckTest {

    static RedisSentinelProcesses sentinel;
    RedisClients clients;
    /** Lettuce on the master itself: the test clients of a Sentinel deployment are Jedis ones. */
    RedisClients onTheMaster;

    private RedisLockTemplate acknowledged(Duration timeout) {
        return clients.lockTemplate(RedisLockConfig.defaults().withReplicaAck(1, timeout));
    }

    @AfterEach
    void resumeTheReplica() {
        if (onTheMaster != null) {
            onTheMaster.close();
        }
        sentinel.replica().resume();
        sentinel.awaitReplicaInSync();
    }

    @Test
    void anAcquisitionTheReplicaAcknowledgedIsHeldAndAlreadyOnTheReplica() {
        RedisLockTemplate locks = acknowledged(Duration.ofSeconds(2));
        try (LockHandle handle = locks.acquire("ack:live", LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
            // WAIT returned only once the replica had the write: no replication lag left to wait for
            assertThat(sentinel.replica().command("GET", "redis-lock:{ack:live}"))
                    .isNotNull().isEqualTo(sentinel.master().command("GET", "redis-lock:{ack:live}"));
        }
        assertThat(sentinel.master().command("EXISTS", "redis-lock:{ack:live}")).isEqualTo("0");
    }

    @Test
    void measuresWhatTheAcknowledgementCostsPerLockCycle() {
        RedisLockTemplate plain = clients.lockTemplate();
        RedisLockTemplate acked = acknowledged(Duration.ofSeconds(1));
        int cycles = 300;
        cycles(plain, "cost:plain", 50); // warm-up
        cycles(acked, "cost:acked", 50);
        double plainMicros = cycles(plain, "cost:plain", cycles);
        double ackedMicros = cycles(acked, "cost:acked", cycles);
        System.out.printf(java.util.Locale.ROOT, "replica-ack cost (Jedis via Sentinel, loopback, 1 replica): acquire + release "
                + "%.0f us without, %.0f us with WAIT 1, mean of %d cycles%n", plainMicros, ackedMicros, cycles);
        assertThat(sentinel.replica().command("EXISTS", "redis-lock:{cost:acked}")).as("released everywhere").isEqualTo("0");
    }

    /** Mean microseconds per acquire + release; every acquisition must be held. */
    private static double cycles(RedisLockTemplate locks, String key, int cycles) {
        long start = System.nanoTime();
        for (int i = 0; i < cycles; i++) {
            try (LockHandle handle = locks.acquire(key, LockOptions.tryOnce())) {
                assertThat(handle.isHeld()).isTrue();
            }
        }
        return (System.nanoTime() - start) / 1000.0 / cycles;
    }

    /**
     * Also shows that WAIT runs on the script's own connection: on any other connection (one that wrote nothing) WAIT
     * counts every connected replica at once, the paused one too, and the acquisition would pass.
     */
    @Test
    void withThePausedReplicaAnAcquisitionFailsNamingTheCauseAndLeavesNoLockBehind() {
        RedisLockTemplate locks = acknowledged(Duration.ofMillis(100));
        sentinel.replica().pause();
        assertThatThrownBy(() -> locks.acquire("ack:paused", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("ack:paused")
                .hasMessageContaining("acknowledged by 0 of 1 replica within 100ms")
                .hasMessageContaining("taken back")
                .cause().isInstanceOf(ReplicaAckException.class);
        assertThat(sentinel.master().command("EXISTS", "redis-lock:{ack:paused}")).isEqualTo("0");
        assertThatThrownBy(() -> locks.tryAcquire("ack:paused", LockOptions.tryOnce())).as("too few acknowledgements "
                + "are an error, not 'held by another owner'").isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("acknowledged by 0 of 1");
        assertThat(sentinel.master().command("EXISTS", "redis-lock:{ack:paused}")).isEqualTo("0");
    }

    @Test
    void aWaitingAcquisitionRetriesUntilTheReplicaAnswersAgain() throws Exception {
        RedisLockTemplate locks = acknowledged(Duration.ofMillis(100));
        sentinel.replica().pause();
        CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> {
            try (LockHandle handle = locks.acquire("ack:retry", LockOptions.waitFor(Duration.ofSeconds(20)))) {
                return handle.isHeld() + " " + sentinel.replica().command("EXISTS", "redis-lock:{ack:retry}");
            }
        });
        // the waiter keeps failing while the replica is paused: no lock is left held meanwhile
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < end) {
            assertThat(waiting).isNotDone();
            Thread.sleep(50);
        }
        sentinel.replica().resume();
        assertThat(waiting.get(20, TimeUnit.SECONDS)).as("held, and on the replica").isEqualTo("true 1");
    }

    @Test
    void everyLockTypeTakesBackAnAcquisitionTheReplicaDidNotAcknowledge() {
        RedisLockTemplate locks = acknowledged(Duration.ofMillis(100));
        sentinel.replica().pause();
        assertThatThrownBy(() -> locks.fairLock("ack:fair").acquire(LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("acknowledged by 0 of 1");
        assertThatThrownBy(() -> locks.acquireAll(List.of("ack:write"), LockOptions.tryOnce(), LockType.WRITE))
                .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("acknowledged by 0 of 1");
        assertThatThrownBy(() -> locks.acquireAll(List.of("ack:read"), LockOptions.tryOnce(), LockType.READ))
                .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("acknowledged by 0 of 1");
        assertThatThrownBy(() -> locks.semaphore("ack:permits", 2).acquire(LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("acknowledged by 0 of 1");
        String keys = sentinel.master().command("KEYS", "redis-lock:*");
        // left: fencing counters, and the record of the attempts given up (each failed), which both expire
        assertThat(keys == null ? List.<String>of() : keys.lines().filter(key -> !key.endsWith(":abandoned")).toList())
                .as("lock state left in Redis")
                .noneMatch(key -> key.equals("redis-lock:{ack:fair}") || key.startsWith("redis-lock:{ack:write}")
                        && !key.endsWith(":fence") || key.startsWith("redis-lock:{ack:read}") && !key.endsWith(":fence"));
        sentinel.replica().resume();
        sentinel.awaitReplicaInSync();
        RedisLockTemplate patient = acknowledged(Duration.ofSeconds(2)); // a live replica may take over 100ms on a loaded machine
        try (LockHandle fair = patient.fairLock("ack:fair").acquire(LockOptions.tryOnce());
                MultiLockHandle write = patient.acquireAll(List.of("ack:write"), LockOptions.tryOnce(), LockType.WRITE);
                MultiLockHandle read = patient.acquireAll(List.of("ack:read"), LockOptions.tryOnce(), LockType.READ)) {
            assertThat(fair.isHeld()).isTrue();
            assertThat(write.isHeld()).isTrue();
            assertThat(read.isHeld()).isTrue();
        }
        RedisSemaphore semaphore = patient.semaphore("ack:permits", 2);
        try (PermitHandle permit = semaphore.acquire(LockOptions.tryOnce())) {
            assertThat(semaphore.availablePermits()).as("the permit taken back before is free again").isEqualTo(1);
        }
    }

    /**
     * A release handing its permits to a waiting thread of the same client grants them in the release's own script
     * call: with the replica cut off, that grant must be refused like any other, or a failover to the replica (which
     * never got it) gives the same permits to someone else (ReplicaAckFailoverTest).
     */
    @Test
    void withTheReplicaCutOffASemaphoreHandOverToAThreadOfTheSameClientIsNotGranted() throws Exception {
        RedisLockTemplate locks = acknowledged(Duration.ofMillis(100));
        RedisSemaphore semaphore = locks.semaphore("ack:hand-over", 1);
        // acknowledged: the replica is live (waiting, as a loaded machine's replica may miss 100 ms)
        PermitHandle held = semaphore.acquire(LockOptions.waitFor(Duration.ofSeconds(10)));
        CompletableFuture<String> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return semaphore.tryAcquire(LockOptions.waitFor(Duration.ofSeconds(2)).withLease(Duration.ofSeconds(30)))
                        .map(handle -> "granted, held " + handle.isHeld()).orElse("not granted");
            } catch (LockNotAcquiredException e) {
                return "not granted: " + e.getMessage();
            }
        });
        awaitWaiting(locks, "ack:hand-over");
        cutOffTheReplica();
        held.release(); // the waiting thread is this client's: the release hands it the permit
        assertThat(waiter.get(20, TimeUnit.SECONDS)).as("the waiting thread's outcome").startsWith("not granted");
        assertThat(sentinel.master().command("ZCARD", "redis-lock:{ack:hand-over}:semaphore:holders"))
                .as("permits held in Redis").isEqualTo("0");
    }

    /** A holding as a test sees it, whatever the lock type. */
    private record Held(BooleanSupplier isHeld, Runnable release) {
    }

    /**
     * Every other grant that passes from a releasing thread to a waiting thread of the same client, with the replica
     * cut off: the exclusive lock's hand-over in Redis (acknowledged, taken back), the fair lock's (the waiter takes
     * it only through its own acknowledged acquisition), the write lock's to a writer and to a reader (each asks
     * Redis with an acknowledged acquisition). None may be granted.
     */
    @Test
    void withTheReplicaCutOffNoLockTypeHandsOverToAWaitingThreadOfTheSameClient() throws Exception {
        RedisLockTemplate locks = acknowledged(Duration.ofMillis(100));
        Map<String, List<Function<LockOptions, Held>>> types = new LinkedHashMap<>();
        Function<LockOptions, Held> write = o -> held(locks.acquireAll(List.of("ack:hand-over:write"), o, LockType.WRITE));
        types.put("exclusive", List.of(o -> held(locks.acquire("ack:hand-over:exclusive", o)),
                o -> held(locks.acquire("ack:hand-over:exclusive", o))));
        types.put("fair", List.of(o -> held(locks.fairLock("ack:hand-over:fair").acquire(o)),
                o -> held(locks.fairLock("ack:hand-over:fair").acquire(o))));
        types.put("write to write", List.of(write, write));
        types.put("write to read", List.of(write,
                o -> held(locks.acquireAll(List.of("ack:hand-over:write"), o, LockType.READ))));
        ExecutorService holder = Executors.newSingleThreadExecutor();
        try {
            for (Map.Entry<String, List<Function<LockOptions, Held>>> type : types.entrySet()) {
                Held held = holder.submit(() -> type.getValue().get(0).apply(LockOptions.waitFor(Duration.ofSeconds(10))))
                        .get(30, TimeUnit.SECONDS);
                AtomicReference<Thread> waitingThread = new AtomicReference<>();
                CompletableFuture<String> waiter = CompletableFuture.supplyAsync(() -> {
                    waitingThread.set(Thread.currentThread());
                    try {
                        Held granted = type.getValue().get(1).apply(LockOptions.waitFor(Duration.ofSeconds(2)));
                        return "granted, held " + granted.isHeld().getAsBoolean();
                    } catch (LockNotAcquiredException e) {
                        return "not granted: " + e.getMessage();
                    }
                });
                awaitParked(waitingThread);
                cutOffTheReplica();
                holder.submit(held.release()).get(10, TimeUnit.SECONDS);
                assertThat(waiter.get(20, TimeUnit.SECONDS)).as(type.getKey() + ": the waiting thread's outcome")
                        .startsWith("not granted");
                sentinel.replica().resume();
                sentinel.awaitReplicaInSync();
            }
        } finally {
            holder.shutdownNow();
        }
    }

    private static Held held(LockHandle handle) {
        return new Held(handle::isHeld, handle::release);
    }

    private static Held held(MultiLockHandle handle) {
        return new Held(handle::isHeld, handle::release);
    }

    /** Waits until {@code thread} has started and waits (for the lock: nothing else it does parks it for long). */
    private static void awaitParked(AtomicReference<Thread> thread) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (thread.get() == null || thread.get().getState() != Thread.State.TIMED_WAITING) {
            assertThat(System.nanoTime()).as("the waiting thread waits").isLessThan(end);
            Thread.sleep(5);
        }
        Thread.sleep(50); // it parks to wait for the lock, not on its way there
    }

    /** Waits until a thread of {@code locks} waits for semaphore {@code key} in Redis (its client's waiter entry). */
    private static void awaitWaiting(RedisLockTemplate locks, String key) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!String.valueOf(sentinel.master().command("ZRANGE", "redis-lock:{" + key + "}:semaphore:waiters", "0", "-1"))
                .contains(locks.clientId())) {
            assertThat(System.nanoTime()).as("a thread waits for " + key).isLessThan(end);
            Thread.sleep(10);
        }
    }

    /**
     * Stops the replica (SIGSTOP) and drops its link: SIGSTOP alone loses nothing, as the kernel still takes the
     * master's stream into the stopped replica's socket buffer.
     */
    private static void cutOffTheReplica() {
        sentinel.replica().pause();
        sentinel.master().command("CLIENT", "KILL", "TYPE", "replica");
    }

    @Test
    void aRenewalTheReplicaDoesNotAcknowledgeFailsAndTheLockIsLostWhenItsLeaseRunsOut() throws Exception {
        RedisLockTemplate locks = clients.lockTemplate(RedisLockConfig.defaults().withReplicaAck(1, Duration.ofMillis(100))
                .withWatchdogLease(Duration.ofMillis(1500)));
        AtomicReference<String> lostReason = new AtomicReference<>();
        CountDownLatch lost = new CountDownLatch(1);
        locks.addLockLostListener((handle, reason) -> {
            lostReason.set(reason);
            lost.countDown();
        });
        LockHandle handle = locks.acquire("ack:renew", LockOptions.tryOnce());
        sentinel.replica().pause();
        assertThat(lost.await(15, TimeUnit.SECONDS)).as("lost once renewals stopped being acknowledged").isTrue();
        assertThat(handle.isHeld()).isFalse();
        assertThat(lostReason.get()).isNotBlank();
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class);
    }

    @Test
    void withLettuceTheWaitRunsOnAConnectionOfItsOwnAndDoesNotStallOtherCallers() throws Exception {
        StringRedisTemplate lettuce = (onTheMaster = new RedisClients(sentinel.master())).lettuceRedisTemplate();
        RedisLockTemplate locks = onTheMaster.lockTemplate(new RedisLockTemplate(lettuce,
                RedisLockConfig.defaults().withReplicaAck(1, Duration.ofSeconds(2))));
        try (LockHandle handle = locks.acquire("ack:lettuce", LockOptions.tryOnce())) {
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{ack:lettuce}")).isEqualTo("1");
        }
        sentinel.replica().pause();
        CompletableFuture<Throwable> blocked = CompletableFuture.supplyAsync(() -> {
            try {
                locks.acquire("ack:lettuce", LockOptions.tryOnce()).release();
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        });
        Thread.sleep(300); // the acquisition's WAIT is blocked on the master now, for up to 2s
        long start = System.nanoTime();
        lettuce.opsForValue().get("ack:other");
        long otherCallerMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(blocked.get(10, TimeUnit.SECONDS)).isInstanceOf(LockNotAcquiredException.class);
        System.out.println("replica-ack with Lettuce: another caller's GET took " + otherCallerMillis
                + " ms while an acquisition's WAIT blocked for 2 s");
        assertThat(otherCallerMillis).as("a GET on the shared connection during a blocked WAIT").isLessThan(1000);
    }

    @Test
    void aWaitOnLettucesSharedConnectionWouldStallEveryOtherCaller() throws Exception {
        // why ScriptRunner pipelines: a plain WAIT on Lettuce's shared native connection blocks everyone behind it
        StringRedisTemplate lettuce = (onTheMaster = new RedisClients(sentinel.master())).lettuceRedisTemplate();
        sentinel.replica().pause();
        // written after the pause, so the replica cannot have acknowledged it: WAIT blocks (a write made before it
        // could be acknowledged first, and WAIT then returned at once; that failed one CI run)
        lettuce.opsForValue().set("ack:shared", "1");
        CompletableFuture<Object> wait = CompletableFuture.supplyAsync(() -> lettuce.execute(
                (RedisCallback<Object>) connection -> ((LettuceConnection) connection).execute("WAIT",
                        new IntegerOutput<>(ByteArrayCodec.INSTANCE), "1".getBytes(), "1500".getBytes()), true));
        Thread.sleep(300);
        long start = System.nanoTime();
        lettuce.opsForValue().get("ack:other");
        long otherCallerMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        wait.get(10, TimeUnit.SECONDS);
        System.out.println("plain WAIT on Lettuce's shared connection: another caller's GET took " + otherCallerMillis + " ms");
        assertThat(otherCallerMillis).isGreaterThanOrEqualTo(500);
    }
}
