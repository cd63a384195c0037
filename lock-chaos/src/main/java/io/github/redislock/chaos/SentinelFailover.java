package io.github.redislock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockType;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.PermitHandle;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The Sentinel failover scenarios: a master with one replica and three sentinels (a fresh deployment per trial);
 * client A takes a lock, the master is killed with SIGKILL while A holds it, the sentinels promote the replica, and
 * client B tries to take the same lock through the sentinels. A counts as holding from its acquisition until it
 * releases (after {@value #HOLD_MILLIS} ms) or its handle says it no longer holds ({@code isHeld()} false: the
 * watchdog found the lock gone, or its lease ran out); B holds for {@value #B_HOLD_MILLIS} ms. Both sections go into
 * one history that {@link HistoryChecker} checks for overlaps (a second holder) and duplicate fencing tokens.
 * <p>
 * Once the sentinels have promoted the replica, a new replica of it is started, so that with
 * {@code redis-lock.replica-ack.replicas=1} a replica can acknowledge again.
 * With the replica paused, it is paused (SIGSTOP) and its link to the master dropped before A acquires, and resumed
 * right after the kill, so writes A made meanwhile never reached it.
 * <p>
 * The hand-over scenarios ({@link HandOver}) cover the grants that pass between threads of one client, with
 * replica-ack on: A's first thread holds (acknowledged), its second thread waits, the replica is cut off, the first
 * thread releases (which hands over where the lock type does), the master is killed and the replica promoted, and B
 * takes the lock there. A hand-over nobody acknowledged must not be held: the second thread is refused.
 */
final class SentinelFailover {

    static final long LEASE_MILLIS = 10_000;
    static final long HOLD_MILLIS = 8000;
    static final long B_HOLD_MILLIS = 100;
    static final Duration ACK_TIMEOUT = Duration.ofMillis(100);
    private static final String KEY = "failover";

    /** The first thread's fixed lease in the hand-over scenarios: over before the failover is, so B can take the lock. */
    static final long HAND_OVER_FIRST_LEASE_MILLIS = 3000;
    /** How long the second thread waits in the hand-over scenarios. */
    static final long HAND_OVER_WAIT_MILLIS = 1000;

    /** The lock types whose grant passes from a releasing thread to a waiting thread of the same client. */
    enum HandOver {
        EXCLUSIVE("an exclusive lock"),
        FAIR("a fair lock"),
        WRITE("a write lock to a writer"),
        WRITE_TO_READ("a write lock to a reader"),
        SEMAPHORE("a semaphore of 1 permit");

        final String label;

        HandOver(String label) {
            this.label = label;
        }
    }

    /**
     * One scenario's figures. In a hand-over scenario ({@code handOver}), A's figures are its second thread's: handed
     * the lock (held at the kill) or refused.
     */
    record Outcome(String scenario, boolean replicaAck, boolean replicaPaused, int trials, int aHeldAtKill, int aRefused,
            int bAcquired, HistoryChecker.Verdict verdict, List<Long> failoverMillis, List<String> errors, boolean handOver) {

        Outcome(String scenario, boolean replicaAck, boolean replicaPaused, int trials, int aHeldAtKill, int aRefused,
                int bAcquired, HistoryChecker.Verdict verdict, List<Long> failoverMillis, List<String> errors) {
            this(scenario, replicaAck, replicaPaused, trials, aHeldAtKill, aRefused, bAcquired, verdict, failoverMillis,
                    errors, false);
        }

        /** A second holder where the promise is exclusion: replica-ack on. */
        List<String> failures() {
            List<String> failures = new ArrayList<>(errors);
            if (replicaAck && verdict.overlaps() > 0) {
                failures.add(scenario + ": " + verdict.overlaps() + " second holders");
            }
            if (verdict.duplicateTokens() > 0) {
                failures.add(scenario + ": " + verdict.duplicateTokens() + " duplicate fencing tokens");
            }
            if (bAcquired == 0) {
                failures.add(scenario + ": B never acquired the lock after a failover");
            }
            if (handOver && aHeldAtKill > 0) {
                failures.add(scenario + ": " + aHeldAtKill + " hand-overs held that no replica acknowledged");
            }
            return failures;
        }
    }

    private SentinelFailover() {
    }

    /** The four scenarios: replica-ack off and on, each with the replica live and paused before the kill. */
    static List<Outcome> all(int trials, String only) throws Exception {
        List<Outcome> outcomes = new ArrayList<>();
        for (boolean paused : new boolean[] {false, true}) {
            for (boolean ack : new boolean[] {false, true}) {
                String name = "Sentinel failover: master killed while a lock is held, replica-ack "
                        + (ack ? "1 replica" : "off") + (paused ? ", replica paused and cut off before the kill" : "");
                if (name.contains(only)) {
                    System.out.println("scenario: " + name);
                    outcomes.add(scenario(name, ack, paused, trials));
                }
            }
        }
        // each hand-over trial shows a defect every time (nothing in it is left to chance), so fewer trials do
        int handOverTrials = Integer.getInteger("chaos.hand-over-trials", Math.min(trials, 3));
        for (HandOver type : HandOver.values()) {
            String name = "Sentinel failover: hand-over of " + type.label + " between threads of one client, replica cut off, "
                    + "replica-ack 1 replica";
            if (name.contains(only)) {
                System.out.println("scenario: " + name);
                outcomes.add(handOverScenario(name, type, handOverTrials));
            }
        }
        return outcomes;
    }

    /** Trials of one {@link HandOver} type, each on a fresh deployment. */
    static Outcome handOverScenario(String name, HandOver type, int trials) throws Exception {
        List<Event> history = new ArrayList<>();
        List<Long> failoverMillis = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        int handedOver = 0;
        int refused = 0;
        int bAcquired = 0;
        for (int trial = 0; trial < trials; trial++) {
            Trial result = handOverTrial(trial, type);
            history.addAll(result.events);
            handedOver += result.aHeld ? 1 : 0;
            refused += result.aRefused ? 1 : 0;
            bAcquired += result.bAcquired ? 1 : 0;
            if (result.failoverMillis >= 0) {
                failoverMillis.add(result.failoverMillis);
            }
            if (result.error != null) {
                errors.add(name + ", trial " + trial + ": " + result.error);
            }
            System.out.println("  trial " + trial + ": A's second thread " + (result.aHeld ? "was handed the lock" : "refused")
                    + ", B " + (result.bAcquired ? "acquired" : "did not acquire") + ", failover " + result.failoverMillis
                    + " ms" + (result.error == null ? "" : ", " + result.error));
        }
        long writes = history.stream().filter(e -> e.type().equals("write")).count();
        HistoryChecker.Verdict verdict = HistoryChecker.check(history, writes);
        return new Outcome(name, true, true, trials, handedOver, refused, bAcquired, verdict, failoverMillis, errors, true);
    }

    /** A holding of any lock type, as the hand-over scenarios see it. */
    private record Grant(long token, BooleanSupplier isHeld, Runnable release) {
    }

    /** Takes {@code type}'s lock on {@link #KEY}: as the thread that holds first, or as the one that waits for it. */
    private static Grant take(RedisLockTemplate locks, HandOver type, boolean waiter, LockOptions options) {
        return switch (type) {
            case EXCLUSIVE -> grant(locks.acquire(KEY, options));
            case FAIR -> grant(locks.fairLock(KEY).acquire(options));
            case WRITE -> grant(locks.acquireAll(List.of(KEY), options, LockType.WRITE));
            case WRITE_TO_READ -> grant(locks.acquireAll(List.of(KEY), options, waiter ? LockType.READ : LockType.WRITE));
            case SEMAPHORE -> {
                PermitHandle permit = locks.semaphore(KEY, 1).acquire(options);
                yield new Grant(permit.fencingToken(), permit::isHeld, permit::release);
            }
        };
    }

    private static Grant grant(LockHandle handle) {
        return new Grant(handle.fencingToken(), handle::isHeld, handle::release);
    }

    private static Grant grant(MultiLockHandle handle) {
        return new Grant(handle.fencingToken(KEY), handle::isHeld, handle::release);
    }

    /**
     * A's first thread holds (acknowledged), its second waits; the replica is cut off and the first releases, handing
     * over where the type does; the master is killed, the replica promoted, and B takes the lock there. The second
     * thread's section runs from its grant until its handle says it lost the lock, or B has had its turn.
     */
    private static Trial handOverTrial(int trial, HandOver type) throws Exception {
        List<Event> events = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService first = Executors.newSingleThreadExecutor();
        ExecutorService second = Executors.newSingleThreadExecutor();
        try (RedisSentinelProcesses deployment = RedisSentinelProcesses.start();
                Client a = new Client(deployment, true);
                Client b = new Client(deployment, true)) {
            // connect both and load every script the trial runs while all is well
            // (waiting, not trying once: on a loaded machine a live replica can miss the 100 ms acknowledgement)
            LockOptions patiently = LockOptions.waitFor(Duration.ofSeconds(10));
            for (boolean waiter : new boolean[] {false, true}) {
                first.submit(() -> take(a.locks, type, waiter, patiently).release().run()).get(30, TimeUnit.SECONDS);
            }
            take(b.locks, type, false, patiently).release().run();
            deployment.awaitReplicaInSync();
            Grant held = first.submit(() -> take(a.locks, type, false,
                    patiently.withLease(Duration.ofMillis(HAND_OVER_FIRST_LEASE_MILLIS)))).get(30, TimeUnit.SECONDS);
            events.add(new Event(System.nanoTime(), "read", "A" + trial + "-1", held.token(), 0, true));
            AtomicReference<Thread> waitingThread = new AtomicReference<>();
            CompletableFuture<Boolean> handed = new CompletableFuture<>();
            CompletableFuture<Void> bDone = new CompletableFuture<>();
            CompletableFuture<Void> secondSection = CompletableFuture.runAsync(() -> {
                waitingThread.set(Thread.currentThread());
                Grant grant;
                try {
                    // a fixed lease: no renewal tells it of a grant the promoted replica never had, only isHeld()
                    grant = take(a.locks, type, true, LockOptions.waitFor(Duration.ofMillis(HAND_OVER_WAIT_MILLIS))
                            .withLease(Duration.ofMillis(LEASE_MILLIS)));
                } catch (LockNotAcquiredException refused) {
                    handed.complete(false);
                    return;
                }
                long start = System.nanoTime();
                events.add(new Event(start, "read", "A" + trial + "-2", grant.token(), 0, true));
                handed.complete(true);
                while (grant.isHeld().getAsBoolean() && !bDone.isDone()
                        && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(60)) {
                    sleep(2);
                }
                events.add(new Event(System.nanoTime(), "write", "A" + trial + "-2", grant.token(), 0, true));
                try {
                    grant.release().run();
                } catch (RuntimeException lostOrUnreachable) {
                    // its section ended when isHeld() turned false
                }
            }, second);
            awaitParked(waitingThread);
            // SIGSTOP alone loses nothing: the kernel still takes the master's stream into the replica's socket
            // buffer, and the replica reads it on resuming. Dropping its link too makes it fall behind for real.
            deployment.replica().pause();
            deployment.master().command("CLIENT", "KILL", "TYPE", "replica");
            first.submit(() -> {
                events.add(new Event(System.nanoTime(), "write", "A" + trial + "-1", held.token(), 0, true));
                try {
                    held.release().run(); // hands the lock to the second thread, where the type does
                } catch (RuntimeException e) {
                    // measured by its section, not its release
                }
            }).get(30, TimeUnit.SECONDS);
            boolean aHeld = handed.get(30, TimeUnit.SECONDS);
            long killedAt = System.nanoTime();
            deployment.master().kill();
            deployment.replica().resume();
            CompletableFuture<Long> failover = CompletableFuture.supplyAsync(() -> awaitFailover(deployment, killedAt));
            CompletableFuture<RedisServerProcess> newReplica = failover.thenApply(ignored -> RedisServerProcess.start(
                    List.of("--replicaof", "127.0.0.1", String.valueOf(deployment.replica().port()))));
            boolean bAcquired = takeAfterFailover(() -> take(b.locks, type, false, LockOptions.waitFor(Duration.ofMillis(500))),
                    "B" + trial, events, killedAt);
            bDone.complete(null);
            secondSection.get(90, TimeUnit.SECONDS);
            long failoverMillis = failover.get(30, TimeUnit.SECONDS);
            newReplica.get(30, TimeUnit.SECONDS).close();
            return new Trial(events, aHeld, !aHeld, bAcquired, failoverMillis, null);
        } catch (Exception e) {
            e.printStackTrace(System.out);
            return new Trial(events, false, false, false, -1, e.toString());
        } finally {
            first.shutdownNow();
            second.shutdownNow();
        }
    }

    /** Waits until {@code thread} has started and parked (waiting for the lock: nothing else parks it for long). */
    private static void awaitParked(AtomicReference<Thread> thread) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (thread.get() == null || thread.get().getState() != Thread.State.TIMED_WAITING) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("the second thread never waited for the lock");
            }
            sleep(5);
        }
        sleep(50); // parked waiting for the lock, not on its way there
    }

    /** B tries until it gets the lock or a failover's worth of time and more has passed. */
    private static boolean takeAfterFailover(Supplier<Grant> take, String worker, List<Event> events, long killedAt) {
        long deadline = killedAt + TimeUnit.SECONDS.toNanos(40);
        String lastFailure = null;
        while (System.nanoTime() < deadline) {
            Grant grant;
            try {
                grant = take.get();
            } catch (LockNotAcquiredException heldOrFailingOver) {
                lastFailure = heldOrFailingOver.getMessage();
                continue;
            }
            events.add(new Event(System.nanoTime(), "read", worker, grant.token(), 0, true));
            sleep(B_HOLD_MILLIS);
            events.add(new Event(System.nanoTime(), "write", worker, grant.token(), 0, true));
            try {
                grant.release().run();
            } catch (RuntimeException e) {
                // measured by its section, not its release
            }
            return true;
        }
        System.out.println("  " + worker + " never acquired; last: " + lastFailure);
        return false;
    }

    static Outcome scenario(String name, boolean ack, boolean paused, int trials) throws Exception {
        List<Event> history = new ArrayList<>();
        List<Long> failoverMillis = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        int heldAtKill = 0;
        int refused = 0;
        int bAcquired = 0;
        for (int trial = 0; trial < trials; trial++) {
            Trial result = trial(trial, ack, paused);
            history.addAll(result.events);
            heldAtKill += result.aHeld ? 1 : 0;
            refused += result.aRefused ? 1 : 0;
            bAcquired += result.bAcquired ? 1 : 0;
            if (result.failoverMillis >= 0) {
                failoverMillis.add(result.failoverMillis);
            }
            if (result.error != null) {
                errors.add(name + ", trial " + trial + ": " + result.error);
            }
            System.out.println("  trial " + trial + ": A " + (result.aHeld ? "held" : "refused") + ", B "
                    + (result.bAcquired ? "acquired" : "did not acquire") + ", failover " + result.failoverMillis + " ms"
                    + (result.error == null ? "" : ", " + result.error));
        }
        long writes = history.stream().filter(e -> e.type().equals("write")).count();
        HistoryChecker.Verdict verdict = HistoryChecker.check(history, writes);
        return new Outcome(name, ack, paused, trials, heldAtKill, refused, bAcquired, verdict, failoverMillis, errors);
    }

    private record Trial(List<Event> events, boolean aHeld, boolean aRefused, boolean bAcquired, long failoverMillis,
            String error) {
    }

    private static Trial trial(int trial, boolean ack, boolean paused) throws Exception {
        List<Event> events = java.util.Collections.synchronizedList(new ArrayList<>());
        try (RedisSentinelProcesses deployment = RedisSentinelProcesses.start();
                Client a = new Client(deployment, ack);
                Client b = new Client(deployment, ack)) {
            // connect both and load the scripts while all is well
            a.locks.acquire("warm-up-a", LockOptions.tryOnce()).release();
            b.locks.acquire("warm-up-b", LockOptions.tryOnce()).release();
            deployment.awaitReplicaInSync();
            if (paused) {
                // SIGSTOP alone loses nothing: the kernel still takes the master's stream into the replica's socket
                // buffer, and the replica reads it on resuming. Dropping its link too makes it fall behind for real.
                deployment.replica().pause();
                deployment.master().command("CLIENT", "KILL", "TYPE", "replica");
            }
            CompletableFuture<Boolean> aAcquired = new CompletableFuture<>();
            CompletableFuture<Void> aSection = CompletableFuture.runAsync(() -> holdAsA(a.locks, "A" + trial, events, aAcquired));
            boolean aHeld = aAcquired.get(30, TimeUnit.SECONDS);
            long killedAt = System.nanoTime();
            deployment.master().kill();
            if (paused) {
                deployment.replica().resume();
            }
            CompletableFuture<Long> failover = CompletableFuture.supplyAsync(() -> awaitFailover(deployment, killedAt));
            // a new replica of the promoted master, on a new port: the killed master restarted on its own port would
            // be a master again, empty, until the sentinels reconfigure it, and a client still pointing there would lock on it
            CompletableFuture<RedisServerProcess> newReplica = failover.thenApply(ignored -> RedisServerProcess.start(
                    List.of("--replicaof", "127.0.0.1", String.valueOf(deployment.replica().port()))));
            boolean bAcquired = takeAfterFailover(b.locks, "B" + trial, events, killedAt);
            if (!bAcquired) {
                System.out.println("  master now " + deployment.currentMasterPort() + " (replica " + deployment.replica().port()
                        + "): lock " + deployment.replica().command("GET", "redis-lock:{failover}") + " ttl "
                        + deployment.replica().command("PTTL", "redis-lock:{failover}") + "; A is " + a.locks.clientId()
                        + ", B is " + b.locks.clientId());
            }
            aSection.get(HOLD_MILLIS + 10_000, TimeUnit.MILLISECONDS);
            long failoverMillis = failover.get(30, TimeUnit.SECONDS);
            newReplica.get(30, TimeUnit.SECONDS).close();
            return new Trial(events, aHeld, !aHeld, bAcquired, failoverMillis, null);
        } catch (Exception e) {
            e.printStackTrace(System.out);
            return new Trial(events, false, false, false, -1, e.toString());
        }
    }

    /**
     * A's section, on one thread (a handle is released by the thread that acquired it): from its acquisition until it
     * releases, or its handle says it lost the lock.
     */
    private static void holdAsA(RedisLockTemplate locks, String worker, List<Event> events, CompletableFuture<Boolean> acquired) {
        LockHandle held;
        try {
            held = locks.acquire(KEY, LockOptions.waitFor(Duration.ofMillis(300)));
        } catch (LockNotAcquiredException refusedByReplicas) {
            acquired.complete(false);
            return;
        }
        long start = System.nanoTime();
        events.add(new Event(start, "read", worker, held.fencingToken(), 0, true));
        acquired.complete(true);
        while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS) && held.isHeld()) {
            sleep(2);
        }
        events.add(new Event(System.nanoTime(), "write", worker, held.fencingToken(), 0, true));
        try {
            held.release();
        } catch (RuntimeException lostOrUnreachable) {
            // the lost lock is what the trial measures; its section ended when isHeld() turned false
        }
    }

    /** B tries until it gets the lock or A's hold and a failover's worth of time have passed. */
    private static boolean takeAfterFailover(RedisLockTemplate locks, String worker, List<Event> events, long killedAt) {
        long deadline = killedAt + TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS + 20_000);
        String lastFailure = null;
        while (System.nanoTime() < deadline) {
            LockHandle handle;
            try {
                handle = locks.acquire(KEY, LockOptions.waitFor(Duration.ofMillis(500)));
            } catch (LockNotAcquiredException heldOrFailingOver) {
                lastFailure = heldOrFailingOver.getMessage();
                continue;
            }
            events.add(new Event(System.nanoTime(), "read", worker, handle.fencingToken(), 0, true));
            sleep(B_HOLD_MILLIS);
            events.add(new Event(System.nanoTime(), "write", worker, handle.fencingToken(), 0, true));
            try {
                handle.release();
            } catch (RuntimeException e) {
                // measured by its section, not its release
            }
            return true;
        }
        System.out.println("  " + worker + " never acquired; last: " + lastFailure);
        return false;
    }

    /** Waits until the sentinels name the replica (the only one they can promote) as the master; ms since the kill. */
    private static long awaitFailover(RedisSentinelProcesses deployment, long killedAt) {
        deployment.awaitPromoted(Duration.ofNanos(killedAt + TimeUnit.SECONDS.toNanos(30) - System.nanoTime()));
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
    }

    /** A lock client reaching the master through the sentinels, with Jedis. */
    private static final class Client implements AutoCloseable {

        final JedisConnectionFactory factory;
        final RedisLockTemplate locks;

        Client(RedisSentinelProcesses deployment, boolean ack) {
            factory = new JedisConnectionFactory(new RedisSentinelConfiguration(RedisSentinelProcesses.MASTER_NAME,
                    new HashSet<>(deployment.sentinelNodes())), JedisClientConfiguration.builder()
                    .connectTimeout(Duration.ofMillis(500)).readTimeout(Duration.ofMillis(500)).usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            RedisLockConfig config = RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(LEASE_MILLIS));
            locks = new RedisLockTemplate(new StringRedisTemplate(factory), ack ? config.withReplicaAck(1, ACK_TIMEOUT) : config);
        }

        @Override
        public void close() {
            locks.close();
            factory.destroy();
        }
    }

    static String report(List<Outcome> outcomes) {
        StringBuilder md = new StringBuilder("\n## Sentinel failover\n\n");
        md.append("A master with one replica and three sentinels (down after 1 s), a fresh deployment per trial. Client A ")
                .append("takes a lock (watchdog lease ").append(LEASE_MILLIS).append(" ms) and holds it for ")
                .append(HOLD_MILLIS).append(" ms; right after A's acquisition the master is killed with SIGKILL; client B ")
                .append("tries to take the same lock through the sentinels until it gets it. A holds from its acquisition ")
                .append("until it releases or `isHeld()` turns false; a second holder is B holding while A still does. ")
                .append("Once the replica is promoted, a new replica of it is started. With the ")
                .append("replica paused, it is stopped (SIGSTOP) and the master drops its link (`CLIENT KILL TYPE replica`) before A acquires; "
                        + "it is resumed right after the kill (SIGSTOP alone loses nothing: the kernel still buffers the master's stream "
                        + "for the stopped replica, which reads it on resuming). ")
                .append("Replica-ack waits ").append(ACK_TIMEOUT.toMillis()).append(" ms for 1 replica.\n\n");
        md.append("| scenario | trials | A held at the kill | A refused (too few replicas) | B acquired after the failover "
                + "| second holders (overlaps) | duplicate / decreasing tokens | failover p50 / max ms |\n");
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
        for (Outcome o : outcomes.stream().filter(o -> !o.handOver()).toList()) {
            List<Long> sorted = new ArrayList<>(o.failoverMillis());
            sorted.sort(null);
            String failover = sorted.isEmpty() ? "–" : sorted.get(sorted.size() / 2) + " / " + sorted.get(sorted.size() - 1);
            md.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d / %d | %s |%n", o.scenario(), o.trials(),
                    o.aHeldAtKill(), o.aRefused(), o.bAcquired(), o.verdict().overlaps(), o.verdict().duplicateTokens(),
                    o.verdict().decreasingTokens(), failover));
        }
        md.append("\nWithout replica-ack, a lock written on the master but not yet on the replica is gone after the ")
                .append("failover, and B takes it while A still holds: with a live replica on loopback that window is ")
                .append("a fraction of a millisecond, with a paused (lagging) replica it is every acquisition since the ")
                .append("pause. With replica-ack an acquisition is held only once the replica has it, so the promoted ")
                .append("replica has it too: B waits for A. A replica that cannot acknowledge makes acquisitions fail ")
                .append("instead (A refused) rather than hand out a lock a failover could lose.\n");
        List<Outcome> handOvers = outcomes.stream().filter(Outcome::handOver).toList();
        if (!handOvers.isEmpty()) {
            md.append("\n### Hand-overs between threads of one client, replica cut off, then promoted\n\n")
                    .append("Replica-ack waits ").append(ACK_TIMEOUT.toMillis()).append(" ms for 1 replica. Client A's ")
                    .append("first thread takes the lock (acknowledged; a fixed lease of ").append(HAND_OVER_FIRST_LEASE_MILLIS)
                    .append(" ms) while its second thread waits for it (").append(HAND_OVER_WAIT_MILLIS).append(" ms, asking ")
                    .append("for a fixed lease of ").append(LEASE_MILLIS).append(" ms, which no renewal cuts short); the ")
                    .append("replica is stopped and its link dropped; the first thread releases, which hands the lock to ")
                    .append("the second where the lock type does (exclusive: in Redis; fair: the next waiter's grant; ")
                    .append("semaphore: in the release's call; read/write: the second thread asks Redis); the master is ")
                    .append("killed, the replica resumed and promoted, and client B takes the lock there. The second ")
                    .append("thread holds from its grant until `isHeld()` turns false or B has had its turn: a hand-over ")
                    .append("no replica acknowledged must be refused, and B must never hold while it does.\n\n");
            md.append("| scenario | trials | hand-overs held (must be 0) | refused | B acquired after the failover "
                    + "| second holders (overlaps) | duplicate / decreasing tokens | failover p50 / max ms |\n");
            md.append("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
            for (Outcome o : handOvers) {
                List<Long> sorted = new ArrayList<>(o.failoverMillis());
                sorted.sort(null);
                String failover = sorted.isEmpty() ? "–" : sorted.get(sorted.size() / 2) + " / " + sorted.get(sorted.size() - 1);
                md.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d / %d | %s |%n", o.scenario(),
                        o.trials(), o.aHeldAtKill(), o.aRefused(), o.bAcquired(), o.verdict().overlaps(),
                        o.verdict().duplicateTokens(), o.verdict().decreasingTokens(), failover));
            }
        }
        return md.toString();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
