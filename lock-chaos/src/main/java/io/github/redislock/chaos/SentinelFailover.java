package io.github.redislock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
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
 */
final class SentinelFailover {

    static final long LEASE_MILLIS = 10_000;
    static final long HOLD_MILLIS = 8000;
    static final long B_HOLD_MILLIS = 100;
    static final Duration ACK_TIMEOUT = Duration.ofMillis(100);
    private static final String KEY = "failover";

    /** One scenario's figures. */
    record Outcome(String scenario, boolean replicaAck, boolean replicaPaused, int trials, int aHeldAtKill, int aRefused,
            int bAcquired, HistoryChecker.Verdict verdict, List<Long> failoverMillis, List<String> errors) {

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
        return outcomes;
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

    /** Waits until the sentinels name the replica (the only one they can promote) as the master. */
    private static long awaitFailover(RedisSentinelProcesses deployment, long killedAt) {
        long end = killedAt + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            try {
                if (deployment.currentMasterPort() == deployment.replica().port()
                        && deployment.replica().command("ROLE").startsWith("master")) {
                    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                }
            } catch (RuntimeException notYet) {
                // a sentinel busy failing over
            }
            sleep(20);
        }
        throw new IllegalStateException("the sentinels did not promote the replica within 30 s");
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
        for (Outcome o : outcomes) {
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
