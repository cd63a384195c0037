package io.github.redislock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedlockTemplate;
import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.beans.factory.DisposableBean;

/**
 * The full fault run's "many locks, frozen node" scenario on Redlock: one client holds many locks (10,000 by default,
 * {@code -Dchaos.redlock-frozen-locks}) on distinct keys over 5 independent masters, one master is frozen with
 * SIGSTOP (its connections stay open, nothing is answered) for one and a half leases, and meanwhile a second client
 * tries to take a sample of the keys. Renewal and release must not wait on the frozen master: no lock may be lost or
 * missing from the healthy four, the second client must get none of them (exclusion), and releases must return
 * within the node timeout. After the master is resumed the second client must get the keys.
 */
public final class RedlockFrozenNode {

    /** The default lease (redis-lock.lease-time's default): 10,000 locks renewed every 10 s. */
    static final long LEASE_MILLIS = 30_000;
    static final Duration NODE_TIMEOUT = Duration.ofMillis(500);
    static final int THREADS = 8;
    /** How many of the held keys the second client tries during the freeze. */
    static final int SAMPLE = 500;
    static final String NAME = "Redlock, 5 masters: many held locks, one master frozen";

    /** What one run showed. */
    record Outcome(String scenario, int locks, long leaseMillis, long frozenMillis, int lost, int notHeldOnHealthyNodes, int contenderTries,
            int contenderGrants, long slowestReleaseMillis, long releaseAllMillis, long clientCpuMillis, int grantedAfterResume,
            List<String> errors) {

        List<String> failures() {
            List<String> failures = new ArrayList<>(errors);
            if (lost > 0) {
                failures.add(scenario + ": " + lost + " locks lost");
            }
            if (notHeldOnHealthyNodes > 0) {
                failures.add(scenario + ": " + notHeldOnHealthyNodes + " locks missing from a healthy master");
            }
            if (contenderGrants > 0) {
                failures.add(scenario + ": " + contenderGrants + " held locks granted to a second client");
            }
            if (slowestReleaseMillis >= NODE_TIMEOUT.toMillis()) {
                failures.add(scenario + ": a release took " + slowestReleaseMillis + " ms, waiting on the frozen master");
            }
            if (grantedAfterResume < Math.min(SAMPLE, locks)) {
                failures.add(scenario + ": only " + grantedAfterResume + " released keys granted after the resume");
            }
            return failures;
        }
    }

    private RedlockFrozenNode() {
    }

    /** The scenario, unless {@code only} is set and not part of its name. */
    static List<Outcome> all(String only) throws Exception {
        if (!NAME.contains(only)) {
            return List.of();
        }
        return List.of(run(Integer.getInteger("chaos.redlock-frozen-locks", 10_000), LEASE_MILLIS));
    }

    static Outcome run(int locks, long leaseMillis) throws Exception {
        List<String> errors = new ArrayList<>();
        List<DisposableBean> factories = new ArrayList<>();
        ExecutorService holders = Executors.newFixedThreadPool(THREADS);
        try (RedisNodes nodes = RedisNodes.start(5)) {
            RedisLockConfig config = RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(leaseMillis));
            RedlockTemplate holder = template(nodes, config, factories);
            RedlockTemplate contender = template(nodes, config, factories);
            AtomicInteger lost = new AtomicInteger();
            AtomicInteger lostAtRelease = new AtomicInteger();
            long startedAt = System.nanoTime();
            holder.addLockLostListener((lock, reason) -> lost.incrementAndGet());
            // each thread takes its share and later releases it (a handle is released by the thread that took it)
            ConcurrentLinkedQueue<LockHandle> held = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<Long> releaseNanos = new ConcurrentLinkedQueue<>();
            CountDownLatch acquired = new CountDownLatch(THREADS);
            CountDownLatch release = new CountDownLatch(1);
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int first = t;
                threads.add(holders.submit(() -> {
                    List<LockHandle> mine = new ArrayList<>();
                    try {
                        for (int i = first; i < locks; i += THREADS) {
                            mine.add(holder.acquire("frozen:" + i, LockOptions.waitFor(Duration.ofSeconds(30))));
                        }
                        held.addAll(mine);
                    } finally {
                        acquired.countDown();
                    }
                    release.await();
                    for (LockHandle handle : mine) {
                        long start = System.nanoTime();
                        try {
                            handle.release();
                        } catch (LockLostException e) {
                            lostAtRelease.incrementAndGet();
                        }
                        releaseNanos.add(System.nanoTime() - start);
                    }
                    return null;
                }));
            }
            acquired.await();
            System.out.println(NAME + ": " + held.size() + " locks acquired in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt) + " ms; freezing a master");
            if (held.size() < locks) {
                errors.add(NAME + ": only " + held.size() + " of " + locks + " locks acquired before the freeze");
            }

            RedisServerProcess frozen = nodes.node(4);
            long cpuAtFreeze = processCpuNanos();
            frozen.pause();
            long frozenAt = System.nanoTime();
            int tries = 0;
            int grants = 0;
            long freezeNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis * 3 / 2);
            int sample = Math.min(SAMPLE, locks);
            for (int i = 0; i < sample; i++) {
                // spread over the freeze's first lease
                long due = frozenAt + TimeUnit.MILLISECONDS.toNanos(leaseMillis) * i / sample;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                tries++;
                try {
                    var grant = contender.tryAcquire("frozen:" + (long) i * locks / sample, LockOptions.tryOnce());
                    if (grant.isPresent()) {
                        grants++;
                        grant.get().release();
                    }
                } catch (RuntimeException e) {
                    errors.add(NAME + ": the second client's try failed: " + e);
                }
            }
            long left = frozenAt + freezeNanos - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
            long frozenMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt);
            int notHeld = (int) held.stream().filter(handle -> !handle.isHeld()).count();
            int missing = missingOnHealthyNodes(nodes, held, holder.clientId());

            long releasing = System.nanoTime();
            release.countDown();
            for (Future<?> thread : threads) {
                thread.get(5, TimeUnit.MINUTES);
            }
            long releaseAllMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasing);
            long slowest = TimeUnit.NANOSECONDS.toMillis(releaseNanos.stream().mapToLong(Long::longValue).max().orElse(0));
            long clientCpuMillis = TimeUnit.NANOSECONDS.toMillis(processCpuNanos() - cpuAtFreeze);
            frozen.resume();

            int afterResume = 0;
            for (int i = 0; i < sample; i++) {
                var grant = contender.tryAcquire("frozen:" + (long) i * locks / sample, LockOptions.waitFor(Duration.ofSeconds(5)));
                if (grant.isPresent()) {
                    afterResume++;
                    grant.get().release();
                }
            }
            holder.close();
            contender.close();
            return new Outcome(NAME, locks, leaseMillis, frozenMillis, Math.max(Math.max(lost.get(), notHeld), lostAtRelease.get()), missing, tries, grants, slowest,
                    releaseAllMillis, clientCpuMillis, afterResume, errors);
        } finally {
            holders.shutdownNow();
            RedlockScenarioClients.destroy(factories);
        }
    }

    /** The CPU time this JVM (both clients) has used so far. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** How many held locks some healthy master (0 to 3) no longer has for {@code clientId}. */
    private static int missingOnHealthyNodes(RedisNodes nodes, java.util.Collection<LockHandle> held, String clientId) {
        List<String> keys = held.stream().map(LockHandle::key).toList();
        java.util.Set<String> missing = new java.util.HashSet<>();
        for (int n = 0; n < 4; n++) {
            missing.addAll(RedlockScenarioClients.missing(nodes.node(n), keys, clientId));
        }
        return missing.size();
    }

    private static RedlockTemplate template(RedisNodes nodes, RedisLockConfig config, List<DisposableBean> factories) {
        return RedlockScenarioClients.template(nodes.nodes().stream().map(RedisServerProcess::port).toList(), config,
                NODE_TIMEOUT, factories);
    }

    static String report(List<Outcome> outcomes) {
        if (outcomes.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder("\n## Redlock: many held locks, one master frozen\n\n");
        md.append("One client holds many locks on distinct keys (").append(THREADS).append(" threads took them, watchdog lease ")
                .append(outcomes.get(0).leaseMillis()).append(" ms) over 5 independent masters (Jedis, node timeout ")
                .append(NODE_TIMEOUT.toMillis()).append(" ms). One master is frozen with SIGSTOP (connections open, ")
                .append("nothing answered) for one and a half leases; meanwhile a second client tries ").append(SAMPLE)
                .append(" of the held keys once each, spread over the first lease. Then every lock is released and timed, the ")
                .append("master resumed, and the second client takes the sampled keys. Promised: no lock lost or missing from ")
                .append("the four healthy masters, none granted to the second client, no release waiting on the frozen master ")
                .append("(each under the node timeout). The clients' CPU is this JVM's (both clients) from the freeze to the ")
                .append("end of the releases.\n\n");
        md.append("| scenario | locks | frozen for (ms) | lost | missing on a healthy master | second client's grants / tries "
                + "| slowest release (ms) | all releases (ms) | clients' CPU (ms) | granted after the resume | verdict |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Outcome o : outcomes) {
            md.append("| ").append(o.scenario()).append(" | ").append(o.locks()).append(" | ").append(o.frozenMillis())
                    .append(" | ").append(o.lost()).append(" | ").append(o.notHeldOnHealthyNodes()).append(" | ")
                    .append(o.contenderGrants()).append(" / ").append(o.contenderTries()).append(" | ")
                    .append(o.slowestReleaseMillis()).append(" | ").append(o.releaseAllMillis()).append(" | ")
                    .append(o.clientCpuMillis()).append(" | ").append(o.grantedAfterResume()).append(" | ")
                    .append(o.failures().isEmpty() ? "pass" : "FAIL: " + String.join("; ", o.failures())).append(" |\n");
        }
        return md.toString();
    }

    /** Runs the scenario alone: {@code -Dchaos.redlock-frozen-locks=10000 -Dchaos.redlock-frozen-lease=10000}. */
    public static void main(String[] args) throws Exception {
        Outcome outcome = run(Integer.getInteger("chaos.redlock-frozen-locks", 10_000),
                Long.getLong("chaos.redlock-frozen-lease", LEASE_MILLIS));
        System.out.println(report(List.of(outcome)));
        System.exit(outcome.failures().isEmpty() ? 0 : 1);
    }
}
