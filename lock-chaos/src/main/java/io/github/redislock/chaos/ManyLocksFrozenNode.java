package io.github.redislock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockDiagnostics;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * "Many locks, frozen node": thousands of watchdog-renewed locks on distinct keys, spread over a fresh 3-master Redis
 * Cluster, held by one client (Jedis, pooled; and Lettuce, Spring Boot's default: one shared connection). One master is frozen (SIGSTOP) for a lease and a half, then resumed (SIGCONT),
 * and the locks are held a lease more. Every lock on the two healthy masters must still be held, in the client
 * ({@code isHeld()}, never reported lost) and in Redis (the key still ours); the locks on the frozen master must be
 * reported lost. It also runs without a freeze, at a larger count, where no lock may be lost. The worst renewal
 * lateness is how long past its due time (a third of the lease after the last renewal) a healthy lock's renewal
 * was still not done, sampled every {@value #SAMPLE_MILLIS} ms. The client's CPU is this JVM's from the freeze to the
 * end of the hold: renewal threads that spin on a frozen master (waiting for a pooled connection, say) show there.
 */
final class ManyLocksFrozenNode {

    /** The shortest watchdog lease, for up to {@value #LOCKS_PER_LEASE_SECOND} locks. */
    static final Duration LEASE = Duration.ofSeconds(1);
    /**
     * Locks per second of lease: with more, the lease grows with them (2 s for 10,000, 4 s for 20,000), as renewing
     * every lock every third of the lease, one script call per hash slot (about one lock a slot at these counts), on
     * three Redis processes sharing a loaded 2-core machine with the client, is work that grows with locks per lease.
     */
    static final int LOCKS_PER_LEASE_SECOND = 5_000;
    static final long SAMPLE_MILLIS = 50;

    private ManyLocksFrozenNode() {
    }

    /** One run: how many locks, how many on the healthy masters were lost, and how late renewals got. */
    record Outcome(String scenario, int locks, long leaseMillis, boolean frozen, int onHealthy, int onFrozen, int healthyNotHeld,
            int healthyReportedLost, int healthyGoneFromRedis, int frozenStillHeld, int frozenReportedLost,
            long worstLatenessMillis, long acquireMillis, long clientCpuMillis, List<String> errors) {

        /** Any lock on a healthy master lost, or a lock on the frozen one still held, fails the scenario. */
        List<String> failures() {
            List<String> failures = new ArrayList<>(errors);
            if (healthyNotHeld + healthyReportedLost + healthyGoneFromRedis > 0) {
                failures.add(scenario + ": locks on the healthy masters lost: " + healthyNotHeld + " not held, "
                        + healthyReportedLost + " reported lost, " + healthyGoneFromRedis + " gone from Redis");
            }
            if (frozen && frozenStillHeld > 0) {
                failures.add(scenario + ": " + frozenStillHeld + " locks on the frozen master still held after it was "
                        + "frozen past their lease");
            }
            return failures;
        }
    }

    /** The full run's scenarios whose name contains {@code only}. */
    static List<Outcome> all(String only) {
        List<Outcome> outcomes = new ArrayList<>();
        for (boolean lettuce : new boolean[] {false, true}) {
            for (int locks : new int[] {2_000, 10_000}) {
                String name = "Many locks, frozen node: " + String.format(Locale.ROOT, "%,d", locks)
                        + " locks on a 3-master Cluster, one master frozen" + (lettuce ? ", Lettuce" : "");
                if (name.contains(only)) {
                    System.out.println("scenario: " + name);
                    outcomes.add(scenario(name, locks, true, lettuce));
                }
            }
        }
        String name = "Many locks, no fault: 20,000 locks on a 3-master Cluster";
        if (name.contains(only)) {
            System.out.println("scenario: " + name);
            outcomes.add(scenario(name, 20_000, false, false));
        }
        return outcomes;
    }

    static Outcome scenario(String name, int count, boolean freeze, boolean lettuce) {
        List<String> errors = new ArrayList<>();
        try (RedisClusterProcesses cluster = RedisClusterProcesses.start(3)) {
            cluster.masters().forEach(m -> m.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
            RedisClusterConfiguration nodes = new RedisClusterConfiguration(cluster.nodes());
            RedisConnectionFactory factory;
            if (lettuce) {
                // as Spring Boot sets Lettuce up: one shared native connection (per node, on a Cluster), no pool
                LettuceConnectionFactory shared = new LettuceConnectionFactory(nodes, LettuceClientConfiguration.builder()
                        .commandTimeout(Duration.ofSeconds(2)).build());
                shared.afterPropertiesSet();
                shared.start();
                factory = shared;
            } else {
                JedisClientConfiguration client = JedisClientConfiguration.builder().connectTimeout(Duration.ofSeconds(2))
                        .readTimeout(Duration.ofSeconds(2)).usePooling().build();
                JedisConnectionFactory pooled = new JedisConnectionFactory(nodes, client);
                pooled.getPoolConfig().setMaxTotal(64);
                pooled.afterPropertiesSet();
                pooled.start();
                factory = pooled;
            }
            StringRedisTemplate redis = new StringRedisTemplate(factory);
            try (RedisLockTemplate locks = new RedisLockTemplate(redis,
                    RedisLockConfig.defaults().withWatchdogLease(lease(count)))) {
                return run(name, count, freeze, cluster, redis, locks, errors);
            } finally {
                cluster.masters().forEach(RedisServerProcess::resume);
                ((DisposableBean) factory).destroy();
            }
        } catch (Exception e) {
            errors.add(name + ": " + e);
            return new Outcome(name, count, lease(count).toMillis(), freeze, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, errors);
        }
    }

    static Duration lease(int locks) {
        return Duration.ofSeconds(Math.max(LEASE.toSeconds(), (locks + LOCKS_PER_LEASE_SECOND - 1) / LOCKS_PER_LEASE_SECOND));
    }

    private static Outcome run(String name, int count, boolean freeze, RedisClusterProcesses cluster,
            StringRedisTemplate redis, RedisLockTemplate locks, List<String> errors) throws InterruptedException {
        Duration lease = lease(count);
        Set<String> lost = ConcurrentHashMap.newKeySet();
        locks.addLockLostListener((lock, reason) -> lost.add(lock.key()));
        // the first acquisition connects, and the watchdog's first renewal finds out it renews on a Cluster and looks
        // its topology up: both before the many
        redis.hasKey("warm-up");
        for (int i = 0; i < 2; i++) {
            try {
                LockHandle warmUp = locks.acquire("warm-up", LockOptions.tryOnce());
                Thread.sleep(lease.toMillis() / 2);
                warmUp.release();
            } catch (LockLostException e) { // the first call took longer than a lease
            }
        }
        lost.clear();

        Map<Integer, RedisServerProcess> masterOfSlot = cluster.masterOfSlot();
        RedisServerProcess frozen = cluster.masters().get(1);
        List<LockHandle> healthy = new ArrayList<>();
        List<LockHandle> onFrozen = new ArrayList<>();
        Set<String> healthyKeys = new HashSet<>();
        long acquiring = System.nanoTime();
        for (int i = 0; i < count; i++) {
            String key = "many:" + i;
            LockHandle handle = locks.acquire(key, LockOptions.tryOnce());
            if (freeze && masterOfSlot.get(ClusterSlotHashUtil.calculateSlot(lockKey(key))) == frozen) {
                onFrozen.add(handle);
            } else {
                healthy.add(handle);
                healthyKeys.add(key);
            }
        }
        long acquireMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquiring);
        if (!lost.isEmpty()) {
            errors.add(name + ": " + lost.size() + " locks lost while the " + count + " were acquired");
        }

        AtomicLong worstLateness = new AtomicLong();
        Thread sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                for (RedisLockDiagnostics.HeldLock held : locks.diagnostics().heldLocks()) {
                    if (held.renewalOverdue() != null && healthyKeys.contains(held.key())) {
                        worstLateness.accumulateAndGet(held.renewalOverdue().toMillis(), Math::max);
                    }
                }
                try {
                    Thread.sleep(SAMPLE_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "many-locks-sampler");
        sampler.setDaemon(true);
        sampler.start();
        long cpuAtFreeze = processCpuNanos();
        try {
            if (freeze) {
                frozen.pause();
                try {
                    Thread.sleep(lease.toMillis() * 3 / 2);
                } finally {
                    frozen.resume();
                }
            } else {
                Thread.sleep(lease.toMillis() * 3 / 2);
            }
            Thread.sleep(lease.toMillis());
        } finally {
            sampler.interrupt();
            sampler.join();
        }
        long clientCpuMillis = TimeUnit.NANOSECONDS.toMillis(processCpuNanos() - cpuAtFreeze);

        int notHeld = 0;
        int reported = 0;
        int gone = 0;
        for (LockHandle handle : healthy) {
            if (!handle.isHeld()) {
                notHeld++;
            }
            if (lost.contains(handle.key())) {
                reported++;
            }
            String owner = redis.opsForValue().get(lockKey(handle.key()));
            if (owner == null || !owner.startsWith(locks.clientId())) {
                gone++;
            }
        }
        int frozenHeld = (int) onFrozen.stream().filter(LockHandle::isHeld).count();
        int frozenReported = (int) onFrozen.stream().map(LockHandle::key).filter(lost::contains).count();
        for (LockHandle handle : healthy) {
            try {
                handle.release();
            } catch (RuntimeException e) {
                // counted above as not held
            }
        }
        Outcome outcome = new Outcome(name, count, lease.toMillis(), freeze, healthy.size(), onFrozen.size(), notHeld, reported, gone,
                frozenHeld, frozenReported, worstLateness.get(), acquireMillis, clientCpuMillis, errors);
        System.out.println(report(List.of(outcome)));
        return outcome;
    }

    /** The CPU time this JVM has used so far. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The Redis key of the exclusive lock on {@code key}, as the engine names it. */
    static String lockKey(String key) {
        return "redis-lock:{" + key + "}";
    }


    static String report(List<Outcome> outcomes) {
        StringBuilder md = new StringBuilder("\n## Many locks, frozen node (Redis Cluster)\n\n");
        md.append("One client (Jedis, pooled; or Lettuce, one shared connection) holds thousands of locks on distinct keys, spread over a fresh 3-master Cluster, with ")
                .append("a watchdog lease of ").append(LEASE.toMillis()).append(" ms for up to ")
                .append(String.format(Locale.ROOT, "%,d", LOCKS_PER_LEASE_SECOND)).append(" locks and a second more per ")
                .append(String.format(Locale.ROOT, "%,d", LOCKS_PER_LEASE_SECOND)).append(" more (renewed every third of ")
                .append("it, each master's locks in batches of their own). One master is frozen with SIGSTOP for a lease and a ")
                .append("half, then resumed, and the locks are held a lease more. A lock on a healthy master is lost when ")
                .append("`isHeld()` is false, the lock-lost listener was told, or Redis no longer has it as the client's; ")
                .append("the locks on the frozen master must be reported lost. Worst renewal lateness: how long past its ")
                .append("due time a healthy lock's renewal was still not done (sampled every ").append(SAMPLE_MILLIS)
                .append(" ms; up to a tick, a sixth of the lease, is the watchdog's rhythm). Client CPU: this JVM's, from the ")
                .append("freeze to the end of the hold (two and a half leases), the sampler's included.\n\n");
        md.append("| scenario | locks | lease ms | on healthy masters | healthy lost (not held / reported / gone from Redis) "
                + "| on the frozen master | frozen reported lost / still held | worst renewal lateness ms | acquired in ms "
                + "| client CPU ms |\n");
        md.append("| --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |\n");
        for (Outcome o : outcomes) {
            md.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,d | %d / %d / %d | %,d | %s | %d | %,d | %,d |%n",
                    o.scenario(), o.locks(), o.leaseMillis(), o.onHealthy(), o.healthyNotHeld(), o.healthyReportedLost(), o.healthyGoneFromRedis(),
                    o.onFrozen(), o.frozen() ? o.frozenReportedLost() + " / " + o.frozenStillHeld() : "–",
                    o.worstLatenessMillis(), o.acquireMillis(), o.clientCpuMillis()));
        }
        return md.toString();
    }

    /** Runs the scenarios alone: {@code -Dchaos.only=} as in {@link ChaosRun}. */
    public static void main(String[] args) {
        List<Outcome> outcomes = all(System.getProperty("chaos.only", ""));
        System.out.println(report(outcomes));
        List<String> failures = new ArrayList<>();
        outcomes.forEach(o -> failures.addAll(o.failures()));
        if (!failures.isEmpty()) {
            System.err.println("FAILED: " + failures);
            System.exit(1);
        }
        System.exit(0);
    }
}
