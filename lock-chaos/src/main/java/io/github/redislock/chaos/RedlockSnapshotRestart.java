package io.github.redislock.chaos;

import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedlockTemplate;
import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * "Redlock, 3 masters: many locks held on a bare majority, a master restarted from an RDB snapshot": the fault the
 * second safety review found with one lock, at the scale users run. One client (the holder) cannot reach master 2 (a
 * partition: its connections to it are refused) and takes thousands of watchdog-renewed locks on distinct keys on the
 * other two, a bare majority. Master 3 saves an RDB snapshot when half of them are taken, is killed with SIGKILL after
 * the rest, and restarts from the snapshot: it has forgotten every lock taken after the snapshot, and holds the older
 * ones with the expiries they had then. A second client (the contender), which reaches all three masters, meanwhile
 * tries keys from both halves: master 2 grants them, so a restarted master 3 that granted too would make a second
 * holder. Promised: no key granted to the contender while its holder says {@code isHeld()}; no lock lost (the holder's
 * watchdog puts its locks back on master 3, which its restart delay lets through for a holder whose lease is valid);
 * every lock back on master 3 within a lease of the kill; and after the releases the contender takes the keys.
 * <p>
 * Its frozen variant ({@link #FROZEN_NAME}): 5 masters, all reachable by both clients; the one restarted from the
 * snapshot is frozen (SIGSTOP) as soon as the holder's watchdog has begun to put its forgotten locks back, for
 * {@link #FROZEN_LEASES} leases, then resumed, and stutters for a lease (frozen longer than the node timeout, answering
 * briefly, over and over) while the put-back goes on. Promised besides: no lock lost meanwhile, every lock back on it
 * once it answers for good, and none of the holder's left on any master after the releases.
 */
public final class RedlockSnapshotRestart {

    static final String NAME = "Redlock, 3 masters: many locks held on a bare majority, a master restarted from an RDB snapshot";
    /** The variant that also freezes the restarted master while the watchdog puts its forgotten locks back. */
    static final String FROZEN_NAME = "Redlock, 5 masters: many locks held, a master restarted from an RDB snapshot and "
            + "frozen while the watchdog puts them back";
    static final Duration NODE_TIMEOUT = Duration.ofMillis(500);
    static final int THREADS = 8;
    /** How many of the held keys the contender tries, each once per round. */
    static final int SAMPLE = 200;
    /**
     * The frozen variant: how long past a lease after the frozen master answers again every lock may take to be back on
     * it. The contender's tries queued on the frozen master run once it answers; on keys not yet put back they grant
     * that master alone to the contender (a minority, which holds up nobody), and such a grant ends with its lease
     * before the put-back can follow (see docs/redlock.md).
     */
    static final long QUEUED_GRANTS_GRACE_MILLIS = 5000;
    /** The frozen variant: how long the restarted master stays frozen, in leases. */
    static final double FROZEN_LEASES = 1.5;
    /** The frozen variant, after the freeze: for a lease, the master answers this long, then is frozen again... */
    static final long STUTTER_ANSWERING_MILLIS = 150;
    /** ...for this long, more than {@link #NODE_TIMEOUT}. */
    static final long STUTTER_FROZEN_MILLIS = 700;
    /** How long after the snapshot the master is killed: within the lease, so the snapshot's locks are still valid. */
    static final long KILL_AFTER_SNAPSHOT_MILLIS = 500;

    /** What one run showed. */
    record Outcome(String scenario, int locks, long leaseMillis, int inSnapshot, int lost, int contenderTries,
            int secondHolders, int grantedWhileNotHeld, int missingOnRestarted, long restartMillis, long allBackMillis,
            long releaseAllMillis, int grantedAfterRelease, List<String> errors, Freeze freeze) {

        /** The frozen variant's figures: how many forgotten locks were back when it froze, how long it stayed so. */
        record Freeze(int backWhenFrozen, long frozenMillis, long allBackAfterResumeMillis, int leftOnNodes) {

            static final Freeze NONE = new Freeze(-1, 0, -1, 0);

            boolean happened() {
                return backWhenFrozen >= 0;
            }
        }

        List<String> failures() {
            List<String> failures = new ArrayList<>(errors);
            if (secondHolders > 0) {
                failures.add(scenario + ": " + secondHolders + " keys granted to the contender while their holder held them");
            }
            if (lost > 0) {
                failures.add(scenario + ": " + lost + " locks lost");
            }
            if (missingOnRestarted > 0) {
                failures.add(scenario + ": " + missingOnRestarted + " held locks not back on the restarted master");
            } else if (freeze.happened()) {
                if (freeze.allBackAfterResumeMillis() > leaseMillis + QUEUED_GRANTS_GRACE_MILLIS) {
                    failures.add(scenario + ": the held locks were back on the restarted master only "
                            + freeze.allBackAfterResumeMillis() + " ms after it answered again, more than a lease and "
                            + QUEUED_GRANTS_GRACE_MILLIS + " ms");
                }
            } else if (allBackMillis > leaseMillis) {
                failures.add(scenario + ": the held locks were back on the restarted master only " + allBackMillis
                        + " ms after the kill, more than a lease");
            }
            if (freeze.leftOnNodes() > 0) {
                failures.add(scenario + ": " + freeze.leftOnNodes() + " locks left on the masters after the releases");
            }
            if (grantedAfterRelease < Math.min(SAMPLE, locks)) {
                failures.add(scenario + ": only " + grantedAfterRelease + " released keys granted to the contender");
            }
            return failures;
        }
    }

    private RedlockSnapshotRestart() {
    }

    /** The scenario, unless {@code only} is set and not part of its name. */
    static List<Outcome> all(String only) throws Exception {
        List<Outcome> outcomes = new ArrayList<>();
        for (boolean freeze : new boolean[] {false, true}) {
            // the frozen variant on Lettuce too (one shared connection per master, Spring Boot's default)
            for (boolean lettuce : freeze ? new boolean[] {false, true} : new boolean[] {false}) {
                if (!((freeze ? FROZEN_NAME : NAME) + (lettuce ? ", Lettuce" : "")).contains(only)) {
                    continue;
                }
                for (String count : System.getProperty("chaos.redlock-snapshot-locks", "10000,30000").split(",")) {
                    int locks = Integer.parseInt(count.trim());
                    outcomes.add(run(locks, Long.getLong("chaos.redlock-snapshot-lease", leaseFor(locks)), freeze, lettuce));
                }
            }
        }
        return outcomes;
    }

    /**
     * The watchdog lease for {@code locks}: 3 s, longer beyond {@link ManyLocksFrozenNode#LOCKS_PER_LEASE_SECOND} locks
     * per second of lease (6 s for 30,000), as renewing them all every third of the lease on a loaded 2-core machine
     * with the three masters is work that grows with locks per lease.
     */
    static long leaseFor(int locks) {
        return Math.max(3_000, 1000L * locks / ManyLocksFrozenNode.LOCKS_PER_LEASE_SECOND);
    }

    /**
     * One run. With {@code freezeDuringPutBack}, the {@link #FROZEN_NAME} variant: 5 masters, all reachable by both
     * clients; master 5 is the one restarted from the snapshot, and it is frozen (SIGSTOP) as soon as the holder's
     * watchdog has put the first of its forgotten locks back, for {@link #FROZEN_LEASES} leases, while the contender
     * tries the sample, then stutters for a lease. The other 4 masters keep every lock renewed meanwhile.
     */
    static Outcome run(int locks, long leaseMillis, boolean freezeDuringPutBack) throws Exception {
        return run(locks, leaseMillis, freezeDuringPutBack, false);
    }

    /** Like {@link #run(int, long, boolean)}; with {@code lettuce}, both clients on Lettuce, as Spring Boot sets it up. */
    static Outcome run(int locks, long leaseMillis, boolean freezeDuringPutBack, boolean lettuce) throws Exception {
        String name = (freezeDuringPutBack ? FROZEN_NAME : NAME) + (lettuce ? ", Lettuce" : "");
        // the holder's subscription to the master it cannot reach fails every half second, each a logged stack trace
        System.setProperty("org.slf4j.simpleLogger.log." + RedisMessageListenerContainer.class.getName(), "off");
        List<String> errors = new ArrayList<>();
        List<DisposableBean> factories = new ArrayList<>();
        ExecutorService holders = Executors.newFixedThreadPool(THREADS);
        // the clients close before the masters stop (resources close in reverse order): Lettuce's would reconnect
        try (RedisNodes nodes = RedisNodes.start(freezeDuringPutBack ? 5 : 3);
                AutoCloseable clients = () -> RedlockScenarioClients.destroy(factories)) {
            RedisServerProcess restarted = nodes.node(freezeDuringPutBack ? 4 : 2);
            RedisLockConfig config = RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(leaseMillis));
            List<Integer> ports = nodes.nodes().stream().map(RedisServerProcess::port).toList();
            List<Integer> holderPorts = new ArrayList<>(ports);
            if (!freezeDuringPutBack) {
                // the holder's way to master 2 is a port nobody listens on: refused at once, as across a partition
                holderPorts.set(1, RedisServerProcess.freePort());
            }
            RedlockTemplate holder = RedlockScenarioClients.template(holderPorts, config, NODE_TIMEOUT, lettuce, factories);
            RedlockTemplate contender = RedlockScenarioClients.template(ports, config, NODE_TIMEOUT, lettuce, factories);
            AtomicInteger lost = new AtomicInteger();
            holder.addLockLostListener((lock, reason) -> lost.incrementAndGet());
            Map<String, LockHandle> held = new ConcurrentHashMap<>();
            CountDownLatch firstHalf = new CountDownLatch(THREADS);
            CountDownLatch snapshotSaved = new CountDownLatch(1);
            CountDownLatch acquired = new CountDownLatch(THREADS);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger lostAtRelease = new AtomicInteger();
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int first = t;
                // each thread takes its share and later releases it (a handle is released by the thread that took it)
                threads.add(holders.submit(() -> {
                    List<LockHandle> mine = new ArrayList<>();
                    try {
                        for (int i = first; i < locks; i += THREADS) {
                            if (i >= locks / 2 && firstHalf.getCount() > 0) {
                                firstHalf.countDown();
                                snapshotSaved.await();
                            }
                            LockHandle handle = holder.acquire(key(i), LockOptions.waitFor(Duration.ofSeconds(30)));
                            mine.add(handle);
                            held.put(key(i), handle);
                        }
                    } finally {
                        if (firstHalf.getCount() > 0) {
                            firstHalf.countDown();
                        }
                        acquired.countDown();
                    }
                    release.await();
                    for (LockHandle handle : mine) {
                        try {
                            handle.release();
                        } catch (LockLostException e) {
                            lostAtRelease.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            firstHalf.await();
            restarted.command("SAVE");
            Set<String> inSnapshotKeys = Set.copyOf(held.keySet());
            snapshotSaved.countDown();
            int inSnapshot = inSnapshotKeys.size();
            acquired.await();
            if (held.size() < locks) {
                errors.add(name + ": only " + held.size() + " of " + locks + " locks acquired");
            }
            System.out.println(name + ": " + held.size() + " locks held, " + inSnapshot + " of them in the snapshot");
            Thread.sleep(KILL_AFTER_SNAPSHOT_MILLIS);

            long killedAt = System.nanoTime();
            restarted.kill();
            restarted.restart();
            long restartMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            int backWhenFrozen = -1;
            long frozenAt = 0;
            if (freezeDuringPutBack) {
                // frozen as soon as the put-back has begun: a lock the snapshot lacks is back on it
                // (one EXISTS over all of them: only the holder's watchdog writes these keys before the freeze)
                List<String> forgotten = held.keySet().stream().filter(key -> !inSnapshotKeys.contains(key))
                        .map(ManyLocksFrozenNode::lockKey).toList();
                String[] exists = new String[forgotten.size() + 1];
                exists[0] = "EXISTS";
                for (int i = 0; i < forgotten.size(); i++) {
                    exists[i + 1] = forgotten.get(i);
                }
                long giveUpAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * leaseMillis);
                int back;
                do {
                    back = Integer.parseInt(restarted.command(exists).trim());
                } while (back == 0 && System.nanoTime() - giveUpAt < 0);
                restarted.pause();
                frozenAt = System.nanoTime();
                backWhenFrozen = back;
                System.out.println(name + ": frozen with " + backWhenFrozen + " of " + forgotten.size()
                        + " forgotten locks put back");
                if (backWhenFrozen == 0) {
                    errors.add(name + ": the put-back had not begun " + 2 * leaseMillis + " ms after the restart");
                }
            }
            // how long after the kill the holder's watchdog has every lock back on the restarted master
            AtomicLong allBackMillis = new AtomicLong(-1);
            AtomicLong allBackAt = new AtomicLong();
            Thread watch = new Thread(() -> {
                try {
                    while (!RedlockScenarioClients.missing(restarted, held.keySet(), holder.clientId()).isEmpty()) {
                        Thread.sleep(50);
                    }
                    allBackAt.set(System.nanoTime());
                    allBackMillis.set(TimeUnit.NANOSECONDS.toMillis(allBackAt.get() - killedAt));
                } catch (InterruptedException | RuntimeException e) {
                    // stopped at the end of the checks, or the master did not answer: not all back
                }
            }, "snapshot-restart-watch");
            if (!freezeDuringPutBack) {
                watch.start(); // else once the master answers again: asked while frozen, it would time out
            }

            // the contender tries the sample round after round, from the restart until a second past the restart delay
            List<String> sample = new ArrayList<>();
            for (int i = 0; i < Math.min(SAMPLE, locks); i++) {
                sample.add(key((int) ((long) i * locks / Math.min(SAMPLE, locks))));
            }
            int tries = 0;
            int secondHolders = 0;
            int grantedWhileNotHeld = 0;
            long tryUntil = freezeDuringPutBack ? frozenAt + (long) (FROZEN_LEASES * TimeUnit.MILLISECONDS.toNanos(leaseMillis))
                    : killedAt + TimeUnit.MILLISECONDS.toNanos(leaseMillis + 1000);
            while (System.nanoTime() - tryUntil < 0) {
                for (String key : sample) {
                    tries++;
                    try {
                        var grant = contender.tryAcquire(key, LockOptions.tryOnce());
                        if (grant.isPresent()) {
                            LockHandle holding = held.get(key);
                            if (holding != null && holding.isHeld()) {
                                secondHolders++;
                            } else {
                                grantedWhileNotHeld++;
                            }
                            grant.get().release();
                        }
                    } catch (RuntimeException e) {
                        errors.add(name + ": the contender's try failed: " + e);
                    }
                }
            }
            int notHeld = 0;
            long resumedAt = 0;
            if (freezeDuringPutBack) {
                while (System.nanoTime() - tryUntil < 0) {
                    Thread.sleep(10);
                }
                // only the 4 healthy masters' renewals kept the locks while it was frozen
                notHeld = (int) held.values().stream().filter(handle -> !handle.isHeld()).count();
                restarted.resume();
                // then it stutters for a lease while the put-back goes on: frozen longer than the node timeout, then
                // answering briefly, so put-back calls in flight time out too
                long stutterUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
                while (System.nanoTime() - stutterUntil < 0) {
                    Thread.sleep(STUTTER_ANSWERING_MILLIS);
                    restarted.pause();
                    Thread.sleep(STUTTER_FROZEN_MILLIS);
                    restarted.resume();
                }
                resumedAt = System.nanoTime();
                watch.start();
                watch.join(leaseMillis + QUEUED_GRANTS_GRACE_MILLIS + 1000);
            } else {
                // one more renewal period: every lock the restarted master forgot is put back by then
                Thread.sleep(leaseMillis / 3 + 500);
            }
            notHeld = Math.max(notHeld, (int) held.values().stream().filter(handle -> !handle.isHeld()).count());
            int missing = RedlockScenarioClients.missing(restarted, held.keySet(), holder.clientId()).size();
            watch.interrupt();
            watch.join();

            long releasing = System.nanoTime();
            release.countDown();
            for (Future<?> thread : threads) {
                thread.get(5, TimeUnit.MINUTES);
            }
            long releaseAllMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasing);
            int leftOnNodes = 0;
            if (freezeDuringPutBack) {
                // a release a master missed is retried in the background: looked at for up to 5 s
                long lookUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                do {
                    leftOnNodes = 0;
                    for (RedisServerProcess node : nodes.nodes()) {
                        // a contender's queued grant (see QUEUED_GRANTS_GRACE_MILLIS) is not the holder's: not counted
                        leftOnNodes += held.size() - RedlockScenarioClients.missing(node, held.keySet(), holder.clientId()).size();
                    }
                } while (leftOnNodes > 0 && System.nanoTime() - lookUntil < 0 && sleep(50));
            }
            Outcome.Freeze freeze = !freezeDuringPutBack ? Outcome.Freeze.NONE : new Outcome.Freeze(backWhenFrozen,
                    TimeUnit.NANOSECONDS.toMillis(resumedAt - frozenAt),
                    allBackAt.get() == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(allBackAt.get() - resumedAt), leftOnNodes);
            int afterRelease = 0;
            for (String key : sample) {
                var grant = contender.tryAcquire(key, LockOptions.waitFor(Duration.ofSeconds(5)));
                if (grant.isPresent()) {
                    afterRelease++;
                    grant.get().release();
                }
            }
            holder.close();
            contender.close();
            return new Outcome(name, locks, leaseMillis, inSnapshot, Math.max(Math.max(lost.get(), notHeld), lostAtRelease.get()),
                    tries, secondHolders, grantedWhileNotHeld, missing, restartMillis, allBackMillis.get(), releaseAllMillis,
                    afterRelease, errors, freeze);
        } finally {
            holders.shutdownNow();
        }
    }

    private static boolean sleep(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return true;
    }

    private static String key(int i) {
        return "snapshot:" + i;
    }

    static String report(List<Outcome> outcomes) {
        if (outcomes.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder("\n## Redlock: many locks, a master restarted from a snapshot (and frozen while "
                + "they are put back)\n\n");
        md.append("Run on ").append(LocalDate.now()).append(". One client holds many locks on distinct keys (")
                .append(THREADS).append(" threads took them; watchdog lease in the table, by default 1 s per 5,000 locks and at least 3 s; ")
                .append("restart delay the same) over 3 independent masters (Jedis, node timeout ")
                .append(NODE_TIMEOUT.toMillis()).append(" ms), but cannot reach master 2 (its connections are refused): ")
                .append("each lock is on a bare majority, masters 1 and 3. Master 3 saves an RDB snapshot when half the ")
                .append("locks are taken, is killed with SIGKILL ").append(KILL_AFTER_SNAPSHOT_MILLIS)
                .append(" ms after the rest and restarts from the snapshot, which lacks the later locks. From the restart ")
                .append("until a second past the restart delay, a second client that reaches all three masters tries ")
                .append(SAMPLE).append(" of the held keys, round after round: master 2 grants each, so a restarted master ")
                .append("that granted too would give it a majority. Promised: none granted while its holder says ")
                .append("`isHeld()`, no lock lost, every lock back on the restarted master within a lease of the kill (the ")
                .append("holder's watchdog puts it back), and the keys granted to the second client after the releases. ")
                .append("\"All back on it after\" is the time from the kill until the restarted master had every held lock ")
                .append("again, looked at every 50 ms.\n\n")
                .append("The frozen variant has 5 masters, all reachable by both clients, and runs on Jedis and (named so) ")
                .append("on Lettuce: one shared connection per master, as Spring Boot sets it up, command timeout ")
                .append(NODE_TIMEOUT.toMillis()).append(" ms. Master 5 saves the snapshot, is ")
                .append("killed and restarts from it as above, and is frozen (SIGSTOP) as soon as the holder's watchdog has put ")
                .append("the first of its forgotten locks back (\"back when frozen\"), for ").append(FROZEN_LEASES)
                .append(" leases, while the second client tries the sample; then it is resumed (SIGCONT) and, for a lease ")
                .append("while the put-back goes on, stutters: ").append(STUTTER_ANSWERING_MILLIS).append(" ms answering, ")
                .append(STUTTER_FROZEN_MILLIS).append(" ms frozen (more than the node timeout), so put-back calls in flight ")
                .append("time out too (\"frozen\" counts from the first freeze to the last resume). Promised besides: no ")
                .append("lock lost while it was frozen (the 4 others renew them), every lock back on it as the holder's within ")
                .append("a lease and ").append(QUEUED_GRANTS_GRACE_MILLIS / 1000).append(" s after it answers for good (the ")
                .append("second client's tries queued on the frozen master run then, and on keys not yet back they grant ")
                .append("it alone, a minority that ends with its lease; docs/redlock.md), and no lock of the holder left on ")
                .append("any master after the releases.\n\n");
        md.append("| scenario | locks | lease (ms) | in the snapshot | restart (ms) | second client's tries | granted while held | "
                + "granted, holder had lost it | lost | missing on the restarted master | all back on it after (ms) | "
                + "all releases (ms) | granted after the releases | back when frozen | frozen (ms) | all back after it "
                + "answered for good (ms) | left on the masters after the releases | verdict |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Outcome o : outcomes) {
            md.append("| ").append(o.scenario()).append(" | ").append(o.locks()).append(" | ").append(o.leaseMillis())
                    .append(" | ").append(o.inSnapshot())
                    .append(" | ").append(o.restartMillis()).append(" | ").append(o.contenderTries()).append(" | ")
                    .append(o.secondHolders()).append(" | ").append(o.grantedWhileNotHeld()).append(" | ").append(o.lost())
                    .append(" | ").append(o.missingOnRestarted()).append(" | ")
                    .append(o.allBackMillis() < 0 ? "–" : String.valueOf(o.allBackMillis())).append(" | ")
                    .append(o.releaseAllMillis()).append(" | ")
                    .append(o.grantedAfterRelease()).append(" | ");
            Outcome.Freeze freeze = o.freeze();
            if (freeze.happened()) {
                md.append(freeze.backWhenFrozen()).append(" | ").append(freeze.frozenMillis()).append(" | ")
                        .append(freeze.allBackAfterResumeMillis() < 0 ? "–" : String.valueOf(freeze.allBackAfterResumeMillis()))
                        .append(" | ").append(freeze.leftOnNodes()).append(" | ");
            } else {
                md.append("– | – | – | – | ");
            }
            md.append(o.failures().isEmpty() ? "pass" : "FAIL: " + String.join("; ", o.failures())).append(" |\n");
        }
        return md.toString();
    }

    /**
     * Runs the scenario alone: {@code -Dchaos.redlock-snapshot-locks=10000,30000} (the counts, one run each) and
     * {@code -Dchaos.redlock-snapshot-lease} (ms; else {@link #leaseFor}).
     */
    public static void main(String[] args) throws Exception {
        List<Outcome> outcomes = all(System.getProperty("chaos.only", ""));
        System.out.println(report(outcomes));
        System.exit(outcomes.stream().allMatch(outcome -> outcome.failures().isEmpty()) ? 0 : 1);
    }
}
