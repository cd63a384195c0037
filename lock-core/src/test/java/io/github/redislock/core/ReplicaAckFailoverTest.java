package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.redislock.test.RedisSentinelProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code redis-lock.replica-ack} across a real Sentinel failover (a deployment of its own per test: the master is
 * killed): permits handed from one thread to another of the same client while the replica was cut off are not counted
 * again by the promoted replica, so no more permits than the limit are held after the failover; and a lock a release
 * hands to a waiting client (the fair lock's hand-over) or frees for it (the exclusive lock) while the replica is cut
 * off is never held by that client, so the promoted replica, which never saw it, gives it to another client alone.
 */
class ReplicaAckFailoverTest {

    private static final String KEY = "ack:failover";

    private final List<ExecutorService> threads = new ArrayList<>();

    @AfterEach
    void stopThreads() {
        threads.forEach(ExecutorService::shutdownNow);
    }

    /** Runs {@code task} on a thread of its own, the one every later call of the same {@code thread} runs on. */
    private <T> T on(ExecutorService thread, Callable<T> task) throws Exception {
        return thread.submit(task).get(30, TimeUnit.SECONDS);
    }

    private ExecutorService thread() {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        threads.add(thread);
        return thread;
    }

    @Test
    void permitsHandedOverInTheClientWhileTheReplicaWasCutOffAreNotGrantedTwiceAfterTheFailover() throws Exception {
        int limit = 2;
        try (RedisSentinelProcesses deployment = RedisSentinelProcesses.start();
                RedisClients clients = new RedisClients(deployment)) {
            RedisLockTemplate locks = clients.lockTemplate(RedisLockConfig.defaults().withReplicaAck(1, Duration.ofMillis(100)));
            RedisLockTemplate afterFailover = clients.lockTemplate(); // another client; the promoted replica has no replica
            RedisSemaphore semaphore = locks.semaphore(KEY, limit);
            ExecutorService first = thread();
            ExecutorService second = thread();
            // both acknowledged while the replica is live (waiting: a loaded machine's replica may miss 100 ms); the
            // first one's lease has ended by the time the failover is over
            LockOptions patiently = LockOptions.waitFor(Duration.ofSeconds(10));
            PermitHandle shortLease = on(first, () -> semaphore.acquire(patiently.withLease(Duration.ofSeconds(3))));
            PermitHandle longLease = on(second, () -> semaphore.acquire(patiently.withLease(Duration.ofSeconds(60))));
            CompletableFuture<PermitHandle> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return semaphore.tryAcquire(LockOptions.waitFor(Duration.ofSeconds(2)).withLease(Duration.ofSeconds(60)))
                            .orElse(null);
                } catch (LockNotAcquiredException refused) {
                    return null;
                }
            }, thread());
            awaitWaiting(deployment, locks);
            // SIGSTOP alone loses nothing (the kernel buffers the master's stream for the stopped replica): drop its link too
            deployment.replica().pause();
            deployment.master().command("CLIENT", "KILL", "TYPE", "replica");
            on(first, () -> {
                shortLease.release(); // hands the permit to the waiting thread of this client
                return null;
            });
            PermitHandle handedOver = waiting.get(30, TimeUnit.SECONDS);

            PermitHandle another = failOverThenAcquire(deployment, () -> afterFailover.semaphore(KEY, limit)
                    .tryAcquire(LockOptions.waitFor(Duration.ofMillis(500)).withLease(Duration.ofSeconds(30))));
            assertThat(another).as("another client got a permit on the promoted replica").isNotNull();
            int held = (longLease.isHeld() ? 1 : 0) + (handedOver != null && handedOver.isHeld() ? 1 : 0)
                    + (another.isHeld() ? 1 : 0);
            assertThat(held).as("permits held at once (handed over in the client before the failover: %s)",
                    handedOver != null).isLessThanOrEqualTo(limit);
        }
    }

    /**
     * Client A holds the lock (acknowledged), client B waits for it; the replica is cut off and A releases. B's grant
     * (the fair lock's hand-over) or its own acquisition (the exclusive lock) reaches the master only: its WAIT finds no
     * replica, so B must not hold the lock: it is taken back, and B's acquisition fails once its wait time is over,
     * saying why. The master dies, the replica is promoted with A's stale holding (released
     * on the master only, so it lasts A's lease), and client C takes the lock there. B must hold nothing while C does.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = LockType.class, names = {"EXCLUSIVE", "FAIR"})
    void aLockGrantedWhileTheReplicaWasCutOffIsNotHeldWhenThePromotedReplicaGivesItToAnother(LockType type)
            throws Exception {
        String key = "ack:grant:" + type;
        try (RedisSentinelProcesses deployment = RedisSentinelProcesses.start();
                RedisClients clients = new RedisClients(deployment)) {
            RedisLockConfig acknowledged = RedisLockConfig.defaults().withReplicaAck(1, Duration.ofMillis(100))
                    .withWatchdogLease(Duration.ofSeconds(2));
            RedisLock holder = lock(clients.lockTemplate(acknowledged), type, key);
            RedisLockTemplate waiterClient = clients.lockTemplate(acknowledged);
            RedisLock waiter = lock(waiterClient, type, key);
            RedisLockTemplate afterFailover = clients.lockTemplate(); // the promoted replica has no replica
            ExecutorService first = thread();
            LockHandle held = on(first, () -> holder.acquire(LockOptions.waitFor(Duration.ofSeconds(10))));
            CompletableFuture<Object> waited = CompletableFuture.supplyAsync(() -> {
                try {
                    return waiter.tryAcquire(LockOptions.waitFor(Duration.ofSeconds(3))).<Object>map(h -> h)
                            .orElse("not acquired");
                } catch (RuntimeException refused) {
                    return refused;
                }
            }, thread());
            String queue = "redis-lock:{" + key + "}" + (type == LockType.FAIR ? ":queue" : ":waiters");
            awaitMember(deployment, queue, waiterClient.clientId());
            deployment.replica().pause();
            deployment.master().command("CLIENT", "KILL", "TYPE", "replica");
            on(first, () -> {
                held.release();
                return null;
            });
            Object outcome = waited.get(30, TimeUnit.SECONDS);
            assertThat(outcome).as("the waiter's outcome with the replica cut off")
                    .isInstanceOf(LockNotAcquiredException.class);
            assertThat(((Exception) outcome).getMessage()).as("why").contains("acknowledged by 0 of 1 replica")
                    .contains("redis-lock.replica-ack");

            // A's stale holding on the promoted replica lasts its lease
            LockHandle another = failOverThenAcquire(deployment,
                    () -> lock(afterFailover, type, key).tryAcquire(LockOptions.waitFor(Duration.ofMillis(500))));
            assertThat(another).as("another client took the lock on the promoted replica").isNotNull();
            assertThat(another.isHeld()).isTrue();
            assertThat(deployment.replica().command("GET", "redis-lock:{" + key + "}"))
                    .as("the promoted replica's holder").startsWith(afterFailover.clientId());
            another.release();
        }
    }

    /**
     * Kills the master, lets the replica run again and waits until the sentinels promote it; then asks {@code attempt}
     * again (for at most 30 s) until it acquires, and returns what it acquired, or {@code null}.
     */
    private static <T> T failOverThenAcquire(RedisSentinelProcesses deployment, Supplier<Optional<T>> attempt)
            throws InterruptedException {
        deployment.master().kill();
        deployment.replica().resume();
        deployment.awaitPromoted(Duration.ofSeconds(30));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            try {
                Optional<T> acquired = attempt.get();
                if (acquired.isPresent()) {
                    return acquired.get();
                }
            } catch (LockNotAcquiredException failingOver) {
                // the sentinels' new master is not known to the client yet
            }
        }
        return null;
    }

    private static RedisLock lock(RedisLockTemplate locks, LockType type, String key) {
        return type == LockType.FAIR ? locks.fairLock(key) : locks.lock(key);
    }

    private static void awaitMember(RedisSentinelProcesses deployment, String sortedSet, String clientId)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!String.valueOf(deployment.master().command("ZRANGE", sortedSet, "0", "-1")).contains(clientId)) {
            assertThat(System.nanoTime()).as("a client waits in %s", sortedSet).isLessThan(end);
            Thread.sleep(10);
        }
    }

    private static void awaitWaiting(RedisSentinelProcesses deployment, RedisLockTemplate locks) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!String.valueOf(deployment.master().command("ZRANGE", "redis-lock:{" + KEY + "}:semaphore:waiters", "0", "-1"))
                .contains(locks.clientId())) {
            assertThat(System.nanoTime()).as("a thread waits for the semaphore").isLessThan(end);
            Thread.sleep(10);
        }
    }

}
