package io.github.redislock.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;

import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import redis.clients.jedis.ClusterPipeline;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.resps.Slowlog;

/**
 * S10, held locks at scale: each library holds N locks at once (1,000, 10,000, 100,000 by default) with its watchdog
 * for several leases, on one Redis and on a 3-master Cluster, and the run reports what holding them costs per lock.
 * <p>
 * For each library, topology and N: 16 threads take N locks on distinct keys ({@code tryLock()}, watchdog-leased),
 * then hold them for {@code scale.leases} leases of {@code scale.lease-ms} (the same lease for every library: ours as
 * {@code RedisLockConfig.withWatchdogLease}, Redisson's as {@code lockWatchdogTimeout}), then release them all. Measured:
 * <ul>
 * <li>the script calls the library sent and their time in Redis (INFO commandstats, reset when the hold begins) per
 * held lock per lease, and the Redis processes' CPU (INFO cpu) per held lock per lease;</li>
 * <li>the lease extensions per held lock per lease (the {@code PEXPIRE} commands the scripts ran, as INFO commandstats
 * counts them): how often a lock was actually renewed, which a library that renews late does less often, and the
 * client's CPU per extension;</li>
 * <li>how long the masters' main threads waited for a processor ({@code /proc/<pid>/schedstat}) per held lock per
 * lease, and how long one script call kept Redis from its other clients: the mean, and the longest from the masters'
 * slow logs;</li>
 * <li>the client JVM's CPU over the hold (its Java threads' CPU time less the monitor thread's) per held lock per
 * lease, its garbage collector threads' CPU over the hold ({@link GcThreads}) per held lock per lease, and its heap
 * per held lock (used heap after a full GC with the locks held, less before; includes the {@code Lock} object and key
 * the harness keeps per lock, the same for every library);</li>
 * <li>the oldest lease seen: a monitor reads the PTTL of up to 2,000 of the held keys every 100 ms (and of every key
 * once at the end of the hold); a renewal is due a third of a lease after the last, so lateness = the oldest age seen
 * − a third of the lease (within the 100 ms the monitor's reads are apart);</li>
 * <li>leases that lapsed: a held key missing from Redis in any read (it must never be);</li>
 * <li>release-all: how long releasing every lock took, the script calls in the second after it (renewals still
 * draining), and what the client JVM keeps afterwards (heap after a full GC, threads, less before the run).</li>
 * </ul>
 * The CPU figures have the library's idle cost taken off: its client, GC and Redis CPU over one lease with no lock held
 * and the monitor reading the same keys, the mean of one such lease before the hold (after an unmeasured warm-up of
 * 1,000 locks) and one after release-all, times the number of leases; how far the two idle leases differ is reported
 * beside each CPU figure as what it can be off by.
 * Run: {@code java -cp ... io.github.redislock.bench.ScaleBenchmark} with {@code -Dscale.counts=1000,10000,100000},
 * {@code -Dscale.lease-ms=6000}, {@code -Dscale.leases=3}, {@code -Dscale.contenders=redis-lock,redis-lock-lettuce,redisson},
 * {@code -Dscale.topologies=single,cluster}, {@code -Dscale.docs=docs} (where {@code benchmarks-scale.md} and its chart go;
 * empty: none). It runs itself again in a JVM with a fixed heap touched up front ({@link #HEAP},
 * {@code -Dscale.heap=2g}); {@code -Dscale.fork=false} runs it in the JVM started.
 */
public final class ScaleBenchmark {

    static final String[] CONTENDERS = {"redis-lock", "redis-lock-lettuce", "redisson"};
    private static final int HOLDER_THREADS = 16;
    private static final int SAMPLE = 2000;
    private static final long MONITOR_INTERVAL_MS = 100;
    /**
     * The calls a library sends to renew: script calls (every library here renews with a script). INFO commandstats also
     * counts the commands a script runs, each apart, so those are left out, as are the harness's own reads.
     */
    private static final List<String> SCRIPT_CALLS = List.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");
    /**
     * The commands that extend a lease: every library here renews a lock with one {@code PEXPIRE} inside its script
     * (and takes none while it only holds), which INFO commandstats counts apart, so their count over the hold is how
     * many times the held locks' leases were extended.
     */
    private static final List<String> LEASE_EXTENSIONS = List.of("pexpire", "expire", "pexpireat", "expireat");

    /** Calls at least this long (µs) go to the slow log, which gives the longest script call of a hold. */
    static final long SLOW_MICROS = 100;

    private final long leaseMs = Long.getLong("scale.lease-ms", 6000);
    private final int leases = Integer.getInteger("scale.leases", 3);
    private final List<Integer> counts = Arrays.stream(System.getProperty("scale.counts", "1000,10000,100000").split(","))
            .map(String::trim).map(Integer::valueOf).toList();
    private final List<String> contenders = List.of(System.getProperty("scale.contenders", String.join(",", CONTENDERS))
            .split(","));
    private final List<String> topologies = List.of(System.getProperty("scale.topologies", "single,cluster").split(","));
    private final List<Row> rows = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    /** One run's figures; per-lock figures are per held lock, per-lease ones per lease of holding. */
    record Row(String topology, String contender, int held, double commandsPerLockPerLease, double redisCommandUsPerLockPerLease,
            double redisCpuUsPerLockPerLease, double clientCpuUsPerLockPerLease, double heapBytesPerLock,
            long oldestLeaseAgeMs, long latenessMs, long lapsed, long acquireMs, long releaseAllMs,
            long commandsInSecondAfterRelease, long heapLeftBytes, int threadsLeft, double clientCpuNoiseUs,
            double redisCpuNoiseUs, double redisWaitUsPerLockPerLease, long longestScriptCallUs,
            double extensionsPerLockPerLease, double gcCpuUsPerLockPerLease, double gcCpuNoiseUs) {

        /** The client's CPU per lease extension (per renewal of one lock), µs; NaN when none was extended. */
        double clientCpuUsPerExtension() {
            return extensionsPerLockPerLease == 0 ? Double.NaN : clientCpuUsPerLockPerLease / extensionsPerLockPerLease;
        }

        /** Whether the client CPU figure is no larger than what the idle measurements vary by. */
        boolean clientCpuWithinNoise() {
            return Math.abs(clientCpuUsPerLockPerLease) <= clientCpuNoiseUs;
        }

        boolean redisCpuWithinNoise() {
            return Math.abs(redisCpuUsPerLockPerLease) <= redisCpuNoiseUs;
        }
    }

    /**
     * The heap of the JVM the benchmark runs in, fixed and touched up front. The heap per lock is read after full
     * GCs, and a full GC hands heap back to the OS: in a JVM whose heap can shrink and grow, the hold that follows
     * pays a page fault (and the kernel's zeroing) for every page its allocations touch again, which a long-running
     * application whose heap stays committed does not. That was about a third of our client CPU at 100,000 locks.
     */
    static final String HEAP = System.getProperty("scale.heap", "2g");

    public static void main(String[] args) throws Exception {
        if (!System.getProperty("scale.fork", "true").equals("false") && !Boolean.getBoolean("scale.forked")) {
            System.exit(runForked(args));
        }
        NettyTransport.apply();
        long started = System.nanoTime();
        ScaleBenchmark benchmark = new ScaleBenchmark();
        benchmark.runAll();
        String report = benchmark.report(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
        System.out.println(report);
        String docs = System.getProperty("scale.docs", "docs");
        if (!docs.isEmpty()) {
            Files.createDirectories(Path.of(docs));
            Files.writeString(Path.of(docs, "benchmarks-scale.md"), report);
            Files.writeString(Path.of(docs, "benchmarks-scale.svg"), benchmark.chart());
            System.out.println("Wrote " + Path.of(docs, "benchmarks-scale.md") + " and its chart");
        }
        if (!benchmark.problems.isEmpty()) {
            System.err.println("PROBLEMS: " + benchmark.problems);
            System.exit(1);
        }
    }

    void runAll() throws Exception {
        for (String topology : topologies) {
            if (topology.equals("single")) {
                try (RedisServerProcess redis = RedisServerProcess.start(); Servers servers = new Servers(List.of(redis), null)) {
                    runTopology(topology, servers);
                }
            } else if (topology.equals("cluster")) {
                try (RedisClusterProcesses cluster = RedisClusterProcesses.start(3);
                        Servers servers = new Servers(cluster.masters(), cluster)) {
                    runTopology(topology, servers);
                }
            } else {
                throw new IllegalArgumentException("scale.topologies names " + topology + "; known: single, cluster");
            }
        }
    }

    private void runTopology(String topology, Servers servers) throws Exception {
        for (int held : counts) {
            for (String contender : contenders) {
                servers.flush();
                Row row = run(topology, contender.trim(), held, servers);
                rows.add(row);
                System.out.println(row);
                if (row.lapsed() > 0) {
                    problems.add(topology + " " + contender + " N=" + held + ": " + row.lapsed() + " leases lapsed");
                }
            }
        }
    }

    private Row run(String topology, String name, int held, Servers servers) throws Exception {
        System.out.printf("S10 %s %s: %,d held locks, lease %d ms, %d leases%n", topology, name, held, leaseMs, leases);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long heapBefore = usedHeapAfterGc();
        int threadsBefore = threads.getThreadCount();
        Row row;
        try (Library library = Library.create(name, servers, leaseMs)) {
            List<String> keys = new ArrayList<>(held);
            String run = Long.toString(System.nanoTime(), 36);
            for (int i = 0; i < held; i++) {
                keys.add("scale:" + run + ":" + i);
            }
            List<String> sample = new ArrayList<>();
            for (int i = 0; i < held; i += Math.max(1, held / SAMPLE)) {
                sample.add(library.redisKey(keys.get(i)));
            }
            Lock warm = library.lock("scale:warm-up:" + run);
            warm.lock();
            warm.unlock();
            // unmeasured: a thousand locks taken, held across a renewal and released, so that the measured hold
            // does not pay for the JIT compiler's work on the library's paths (at 1,000 held locks it outweighed
            // the renewals themselves)
            List<String> warmKeys = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                warmKeys.add("scale:warm-up:" + run + ":" + i);
            }
            Holders warmUp = new Holders(library, warmKeys);
            warmUp.acquireAll();
            Thread.sleep(leaseMs / 2);
            warmUp.releaseAll();
            Idle idleBefore = idle(servers, sample);

            Holders holders = new Holders(library, keys);
            long acquireMs = holders.acquireAll();
            double heapPerLock = (double) (usedHeapAfterGc() - heapBefore) / held;

            servers.resetStats();
            long redisCpuStart = servers.cpuMicros();
            double redisWaitStart = servers.waitMicros();
            // the Java threads' CPU (ns), not the process's (the JVM reads it in 10 ms ticks, and it includes the JIT
            // compiler's and the garbage collector's work, which at 1,000 held locks outweighed the renewals')
            Map<Long, Long> clientCpuStart = ThreadTotals.cpuNanos();
            long gcCpuStart = GcThreads.cpuNanos();
            Monitor monitor = new Monitor(servers, sample, leaseMs, holders.lapsed);
            Thread monitorThread = new Thread(monitor, "scale-monitor");
            monitorThread.start();
            Thread.sleep(leaseMs * leases);
            monitor.stop = true;
            monitorThread.join();
            long holdClientNanos = ThreadTotals.since(clientCpuStart, ThreadTotals.cpuNanos()) - monitor.cpuNanos;
            long holdGcNanos = GcThreads.cpuNanos() - gcCpuStart;
            long holdRedisMicros = servers.cpuMicros() - redisCpuStart;
            double holdRedisWaitMicros = servers.waitMicros() - redisWaitStart;
            Commands commands = servers.commands();
            long longestScriptCall = servers.longestScriptCallMicros();
            // every held key once, at the end of the hold
            monitor.readAll(keys.stream().map(library::redisKey).toList());

            long releaseStart = System.nanoTime();
            holders.releaseAll();
            long releaseAllMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releaseStart);
            servers.resetStats();
            Thread.sleep(1000);
            long afterRelease = servers.commands().calls;
            // the library's own cost with no lock held (its threads, timers, connections) and the monitor's reads of
            // the same keys, over one lease, taken off the hold's CPU figures: the mean of one lease before the hold
            // (after the warm-up) and one after release-all. How far the two differ is what the figure can be off by
            Idle idleAfter = idle(servers, sample);
            double clientCpuNanos = holdClientNanos - (idleBefore.clientNanos + idleAfter.clientNanos) / 2.0 * leases;
            double redisCpu = holdRedisMicros - (idleBefore.redisMicros + idleAfter.redisMicros) / 2.0 * leases;
            double clientNoiseNanos = Math.abs(idleBefore.clientNanos - idleAfter.clientNanos) / 2.0 * leases;
            double redisNoiseMicros = Math.abs(idleBefore.redisMicros - idleAfter.redisMicros) / 2.0 * leases;
            boolean gcReadable = gcCpuStart >= 0 && idleBefore.gcNanos >= 0 && idleAfter.gcNanos >= 0;
            double gcCpuNanos = gcReadable ? holdGcNanos - (idleBefore.gcNanos + idleAfter.gcNanos) / 2.0 * leases : Double.NaN;
            double gcNoiseNanos = Math.abs(idleBefore.gcNanos - idleAfter.gcNanos) / 2.0 * leases;
            double perLockPerLease = (double) held * leases;
            long lateness = Math.max(0, monitor.oldestAgeMs.get() - leaseMs / 3);
            row = new Row(topology, name, held, commands.calls / perLockPerLease, commands.micros / perLockPerLease,
                    redisCpu / perLockPerLease, clientCpuNanos / 1000.0 / perLockPerLease, heapPerLock,
                    monitor.oldestAgeMs.get(), lateness, monitor.lapsed.size(), acquireMs, releaseAllMs, afterRelease, 0, 0,
                    clientNoiseNanos / 1000.0 / perLockPerLease, redisNoiseMicros / perLockPerLease,
                    (holdRedisWaitMicros - (idleBefore.redisWaitMicros + idleAfter.redisWaitMicros) / 2.0 * leases)
                            / perLockPerLease, longestScriptCall, commands.extensions / perLockPerLease,
                    gcCpuNanos / 1000.0 / perLockPerLease, gcNoiseNanos / 1000.0 / perLockPerLease);
            String leftOver = library.leftOver();
            if (!leftOver.isEmpty()) {
                System.out.println("  left in the library after release-all: " + leftOver);
            }
        }
        long heapLeft = usedHeapAfterGc() - heapBefore;
        int threadsLeft = threads.getThreadCount() - threadsBefore;
        return new Row(row.topology(), row.contender(), row.held(), row.commandsPerLockPerLease(),
                row.redisCommandUsPerLockPerLease(), row.redisCpuUsPerLockPerLease(), row.clientCpuUsPerLockPerLease(),
                row.heapBytesPerLock(), row.oldestLeaseAgeMs(), row.latenessMs(), row.lapsed(), row.acquireMs(),
                row.releaseAllMs(), row.commandsInSecondAfterRelease(), heapLeft, threadsLeft, row.clientCpuNoiseUs(),
                row.redisCpuNoiseUs(), row.redisWaitUsPerLockPerLease(), row.longestScriptCallUs(),
                row.extensionsPerLockPerLease(), row.gcCpuUsPerLockPerLease(), row.gcCpuNoiseUs());
    }

    /** A library's CPU over one lease with no lock held, the monitor reading the (missing) sample keys. */
    private record Idle(long clientNanos, long redisMicros, double redisWaitMicros, long gcNanos) {
    }

    private Idle idle(Servers servers, List<String> sample) throws InterruptedException {
        long redisStart = servers.cpuMicros();
        double redisWaitStart = servers.waitMicros();
        Map<Long, Long> clientStart = ThreadTotals.cpuNanos();
        long gcStart = GcThreads.cpuNanos();
        Monitor idle = new Monitor(servers, sample, leaseMs, ConcurrentHashMap.newKeySet()); // no key held
        Thread idleThread = new Thread(idle, "scale-monitor-idle");
        idleThread.start();
        Thread.sleep(leaseMs);
        idle.stop = true;
        idleThread.join();
        return new Idle(ThreadTotals.since(clientStart, ThreadTotals.cpuNanos()) - idle.cpuNanos,
                servers.cpuMicros() - redisStart, servers.waitMicros() - redisWaitStart,
                gcStart < 0 ? -1 : GcThreads.cpuNanos() - gcStart);
    }

    /**
     * Runs the benchmark again in a JVM with a fixed heap of {@link #HEAP}, touched before it starts, with this JVM's
     * options and class path (later options win, so the heap is ours).
     */
    private static int runForked(String[] args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(List.of("-Xms" + HEAP, "-Xmx" + HEAP, "-XX:+AlwaysPreTouch", "-Dscale.forked=true", "-cp",
                System.getProperty("java.class.path"), ScaleBenchmark.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).inheritIO().start().waitFor();
    }

    /**
     * The heap this JVM runs with, as its options set it: fixed and touched up front in the benchmark's own JVM
     * ({@link #runForked}), which a report says since the client CPU figures depend on it.
     */
    private static String heapDescription() {
        List<String> options = ManagementFactory.getRuntimeMXBean().getInputArguments();
        String min = null;
        String max = null;
        boolean preTouch = false;
        for (String option : options) {
            if (option.startsWith("-Xms")) {
                min = option.substring(4);
            } else if (option.startsWith("-Xmx")) {
                max = option.substring(4);
            } else if (option.equals("-XX:+AlwaysPreTouch")) {
                preTouch = true;
            } else if (option.equals("-XX:-AlwaysPreTouch")) {
                preTouch = false;
            }
        }
        if (min != null && min.equals(max)) {
            return "fixed at " + max + (preTouch ? ", touched before the run" : "");
        }
        return "the JVM's default, which full GCs shrink: the hold pays page faults to grow it again";
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    /** The threads that take the locks, hold them and release them: a lock is released by the thread that took it. */
    private static final class Holders {

        private final Library library;
        private final List<String> keys;
        private final CountDownLatch release = new CountDownLatch(1);
        private final List<Thread> threads = new ArrayList<>();
        private final CountDownLatch acquired = new CountDownLatch(HOLDER_THREADS);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicLong notAcquired = new AtomicLong();
        /**
         * The Redis keys of held locks that lapsed, each once: found missing by the monitor, or whose unlock found the
         * lock no longer held (its lease ran out while the others were being released).
         */
        final Set<String> lapsed = ConcurrentHashMap.newKeySet();

        Holders(Library library, List<String> keys) {
            this.library = library;
            this.keys = keys;
        }

        long acquireAll() throws InterruptedException {
            long start = System.nanoTime();
            for (int t = 0; t < HOLDER_THREADS; t++) {
                int first = t;
                Thread thread = new Thread(() -> hold(first), "scale-holder-" + t);
                threads.add(thread);
                thread.start();
            }
            acquired.await();
            check();
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        }

        private void hold(int first) {
            List<Lock> mine = new ArrayList<>();
            List<String> mineKeys = new ArrayList<>();
            try {
                for (int i = first; i < keys.size(); i += HOLDER_THREADS) {
                    Lock lock = library.lock(keys.get(i));
                    if (lock.tryLock()) {
                        mine.add(lock);
                        mineKeys.add(keys.get(i));
                    } else {
                        notAcquired.incrementAndGet();
                    }
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            } finally {
                acquired.countDown();
            }
            try {
                release.await();
            } catch (InterruptedException e) {
                failure.compareAndSet(null, e);
                return;
            }
            for (int i = 0; i < mine.size(); i++) {
                try {
                    mine.get(i).unlock();
                } catch (IllegalMonitorStateException | io.github.redislock.core.LockLostException e) { // its lease ran out first
                    if (lapsed.add(library.redisKey(mineKeys.get(i))) && lapsed.size() == 1) {
                        System.out.println("  an unlock found its lock no longer held: " + e);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }
        }

        void releaseAll() throws InterruptedException {
            release.countDown();
            for (Thread thread : threads) {
                thread.join();
            }
            check();
        }

        private void check() {
            if (failure.get() != null) {
                throw new IllegalStateException("a holder thread failed", failure.get());
            }
            if (notAcquired.get() > 0) {
                throw new IllegalStateException(notAcquired.get() + " locks on fresh keys were not acquired");
            }
        }
    }

    /** Reads the PTTL of the sampled keys every 100 ms: the oldest lease age seen, and keys gone while held. */
    private static final class Monitor implements Runnable {

        private final Servers servers;
        private final List<String> sample;
        private final long leaseMs;
        final AtomicLong oldestAgeMs = new AtomicLong();
        final Set<String> lapsed;
        volatile boolean stop;
        volatile long cpuNanos;

        Monitor(Servers servers, List<String> sample, long leaseMs, Set<String> lapsed) {
            this.lapsed = lapsed;
            this.servers = servers;
            this.sample = sample;
            this.leaseMs = leaseMs;
        }

        @Override
        public void run() {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long cpuStart = threads.getCurrentThreadCpuTime();
            try {
                while (!stop) {
                    long next = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MONITOR_INTERVAL_MS);
                    readAll(sample);
                    long sleep = next - System.nanoTime();
                    if (sleep > 0) {
                        TimeUnit.NANOSECONDS.sleep(sleep);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                cpuNanos = threads.getCurrentThreadCpuTime() - cpuStart;
            }
        }

        void readAll(List<String> keys) {
            List<Long> pttls = servers.pttl(keys);
            for (int i = 0; i < pttls.size(); i++) {
                long pttl = pttls.get(i);
                if (pttl == -2) {
                    lapsed.add(keys.get(i));
                } else if (pttl >= 0) {
                    oldestAgeMs.accumulateAndGet(leaseMs - pttl, Math::max);
                }
            }
        }
    }

    /**
     * Script calls the library sent and their time in Redis, and the lease extensions ({@link #LEASE_EXTENSIONS}) its
     * scripts ran, as INFO commandstats counts them.
     */
    record Commands(long calls, long micros, long extensions) {
    }

    /** The Redis processes of one topology, and a Jedis client of the harness's own to read them. */
    static final class Servers implements AutoCloseable {

        private final List<RedisServerProcess> masters;
        final RedisClusterProcesses cluster;
        private final Jedis single;
        private final JedisCluster clustered;

        Servers(List<RedisServerProcess> masters, RedisClusterProcesses cluster) {
            this.masters = masters;
            this.cluster = cluster;
            if (cluster == null) {
                single = new Jedis(masters.get(0).host(), masters.get(0).port());
                clustered = null;
            } else {
                single = null;
                clustered = new JedisCluster(new HostAndPort(masters.get(0).host(), masters.get(0).port()));
            }
            // the slow log keeps every call of at least SLOW_MICROS, enough of them for a whole hold
            masters.forEach(m -> {
                m.command("CONFIG", "SET", "slowlog-log-slower-than", Long.toString(SLOW_MICROS));
                m.command("CONFIG", "SET", "slowlog-max-len", "100000");
            });
        }

        void flush() {
            masters.forEach(m -> m.command("FLUSHALL"));
        }

        /** Resets INFO commandstats and the slow log. */
        void resetStats() {
            masters.forEach(m -> {
                m.command("CONFIG", "RESETSTAT");
                m.command("SLOWLOG", "RESET");
            });
        }

        /**
         * The longest script call since the last {@link #resetStats()}, in µs, from the masters' slow logs: how long one
         * call kept Redis from every other client (Redis runs one command at a time); 0 when none took {@link #SLOW_MICROS}.
         */
        long longestScriptCallMicros() {
            long longest = 0;
            for (RedisServerProcess master : masters) {
                try (Jedis jedis = new Jedis(master.host(), master.port())) {
                    for (Slowlog call : jedis.slowlogGet(100_000)) {
                        if (!call.getArgs().isEmpty() && SCRIPT_CALLS.contains(call.getArgs().get(0).toLowerCase(Locale.ROOT))) {
                            longest = Math.max(longest, call.getExecutionTime());
                        }
                    }
                }
            }
            return longest;
        }

        /** The masters' CPU (user + system), in µs, since they started. */
        long cpuMicros() {
            long total = 0;
            for (RedisServerProcess master : masters) {
                total += cpuMicros(master);
            }
            return total;
        }

        /** One Redis server's CPU (user + system, INFO cpu), in µs, since it started. */
        static long cpuMicros(RedisServerProcess server) {
            Map<String, String> info = info(server.command("INFO", "cpu"));
            return Math.round((Double.parseDouble(info.get("used_cpu_user")) + Double.parseDouble(info.get("used_cpu_sys")))
                    * 1_000_000);
        }

        /**
         * How long the masters' main threads (which run every command and script) waited for a processor, in µs, since
         * they started: the run-queue wait Linux counts in {@code /proc/<pid>/schedstat}; NaN where it is not readable
         * (so is any difference taken from it).
         */
        double waitMicros() {
            double total = 0;
            for (RedisServerProcess master : masters) {
                try {
                    total += Schedstat.read(Path.of("/proc", Long.toString(master.pid()), "schedstat")).waitingNanos() / 1000;
                } catch (IOException | RuntimeException e) {
                    return Double.NaN;
                }
            }
            return total;
        }

        /** The library's script calls since the last {@link #resetStats()}, their time in Redis, and the lease extensions. */
        Commands commands() {
            long calls = 0;
            long micros = 0;
            long extensions = 0;
            for (RedisServerProcess master : masters) {
                for (Map.Entry<String, String> stat : info(master.command("INFO", "commandstats")).entrySet()) {
                    String command = stat.getKey().substring("cmdstat_".length());
                    boolean script = SCRIPT_CALLS.contains(command);
                    if (!script && !LEASE_EXTENSIONS.contains(command)) {
                        continue;
                    }
                    Map<String, String> fields = new LinkedHashMap<>();
                    for (String field : stat.getValue().split(",")) {
                        String[] kv = field.split("=", 2);
                        fields.put(kv[0], kv[1]);
                    }
                    if (script) {
                        calls += Long.parseLong(fields.get("calls"));
                        micros += Long.parseLong(fields.get("usec"));
                    } else {
                        extensions += Long.parseLong(fields.get("calls"));
                    }
                }
            }
            return new Commands(calls, micros, extensions);
        }

        List<Long> pttl(List<String> keys) {
            List<Response<Long>> replies = new ArrayList<>(keys.size());
            if (single != null) {
                Pipeline pipeline = single.pipelined();
                keys.forEach(key -> replies.add(pipeline.pttl(key)));
                pipeline.sync();
            } else {
                try (ClusterPipeline pipeline = clustered.pipelined()) {
                    keys.forEach(key -> replies.add(pipeline.pttl(key)));
                    pipeline.sync();
                }
            }
            return replies.stream().map(Response::get).toList();
        }

        private static Map<String, String> info(String text) {
            Map<String, String> values = new LinkedHashMap<>();
            for (String line : text.split("\r?\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && !line.startsWith("#")) {
                    values.put(line.substring(0, colon), line.substring(colon + 1).trim());
                }
            }
            return values;
        }

        @Override
        public void close() {
            if (single != null) {
                single.close();
            }
            if (clustered != null) {
                clustered.close();
            }
        }
    }

    /** One library as the scale run uses it: a watchdog-leased {@link Lock} per key, and where the key is in Redis. */
    abstract static class Library implements AutoCloseable {

        abstract Lock lock(String key);

        abstract String redisKey(String key);

        /** What the library still tracks after every lock was released, as far as it tells; empty when nothing. */
        String leftOver() {
            return "";
        }

        @Override
        public abstract void close();

        static Library create(String name, Servers servers, long leaseMs) {
            return switch (name) {
                case "redis-lock" -> new Ours(servers, leaseMs, Library::jedis);
                case "redis-lock-lettuce" -> new Ours(servers, leaseMs, Library::lettuce);
                case "redisson" -> new RedissonLibrary(servers, leaseMs);
                default -> throw new IllegalArgumentException("scale.contenders names " + name + "; known: "
                        + String.join(", ", CONTENDERS));
            };
        }

        private static JedisConnectionFactory jedis(Servers servers) {
            JedisClientConfiguration client = JedisClientConfiguration.builder().usePooling().build();
            JedisConnectionFactory factory = servers.cluster == null
                    ? new JedisConnectionFactory(new RedisStandaloneConfiguration(servers.masters.get(0).host(),
                            servers.masters.get(0).port()), client)
                    : new JedisConnectionFactory(new RedisClusterConfiguration(servers.cluster.nodes()), client);
            factory.getPoolConfig().setMaxTotal(64);
            factory.getPoolConfig().setMaxIdle(64);
            factory.afterPropertiesSet();
            factory.start();
            return factory;
        }

        /** Lettuce as Spring Boot sets it up by default: one shared native connection, no pool. */
        private static LettuceConnectionFactory lettuce(Servers servers) {
            LettuceConnectionFactory factory = servers.cluster == null
                    ? new LettuceConnectionFactory(new RedisStandaloneConfiguration(servers.masters.get(0).host(),
                            servers.masters.get(0).port()))
                    : new LettuceConnectionFactory(new RedisClusterConfiguration(servers.cluster.nodes()));
            factory.afterPropertiesSet();
            factory.start();
            return factory;
        }
    }

    private static final class Ours extends Library {

        private final RedisConnectionFactory factory;
        private final RedisLockTemplate template;

        <F extends RedisConnectionFactory & DisposableBean> Ours(Servers servers, long leaseMs, Function<Servers, F> factory) {
            this.factory = factory.apply(servers);
            this.template = new RedisLockTemplate(new StringRedisTemplate(this.factory),
                    RedisLockConfig.defaults().withWatchdogLease(java.time.Duration.ofMillis(leaseMs)));
        }

        @Override
        Lock lock(String key) {
            return template.lock(key);
        }

        @Override
        String redisKey(String key) {
            return "redis-lock:{" + key + "}";
        }

        @Override
        String leftOver() {
            int local = template.diagnostics().localLockCount();
            int renewing = template.diagnostics().scheduledRenewalCount();
            return local == 0 && renewing == 0 ? "" : local + " local locks, " + renewing + " renewals scheduled";
        }

        @Override
        public void close() {
            template.close();
            try {
                ((DisposableBean) factory).destroy();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static final class RedissonLibrary extends Library {

        private final RedissonClient client;

        RedissonLibrary(Servers servers, long leaseMs) {
            Config config = NettyTransport.redisson(new Config());
            config.setLockWatchdogTimeout(leaseMs);
            if (servers.cluster == null) {
                config.useSingleServer().setAddress("redis://" + servers.masters.get(0).host() + ":" + servers.masters.get(0).port())
                        .setConnectionPoolSize(64).setConnectionMinimumIdleSize(8);
            } else {
                config.useClusterServers().addNodeAddress(servers.cluster.nodes().stream().map(node -> "redis://" + node)
                        .toArray(String[]::new));
            }
            client = Redisson.create(config);
        }

        @Override
        Lock lock(String key) {
            return client.getLock(key);
        }

        @Override
        String redisKey(String key) {
            return key;
        }

        @Override
        public void close() {
            client.shutdown();
        }
    }

    String report(long seconds) {
        StringBuilder md = new StringBuilder();
        md.append("# Held locks at scale (S10)\n\n");
        md.append(String.format(Locale.ROOT, "Generated by `ScaleBenchmark` on %s: JVM %s %s (heap %s), Redis %s on "
                + "loopback, %d cores; lease %d ms for every library, held for %d leases; the run took %d s.%n%n",
                LocalDate.now(), System.getProperty("java.vm.name"), System.getProperty("java.version"), heapDescription(),
                redisVersion(), Runtime.getRuntime().availableProcessors(), leaseMs, leases, seconds));
        String redisson = Redisson.class.getPackage().getImplementationVersion();
        md.append("Peer: Redisson ").append(redisson == null ? "" : redisson).append(" `RLock`. ");
        md.append("Each library takes N locks on distinct keys with 16 threads (`tryLock()`, watchdog-leased), holds them, ");
        md.append("then releases them all. Our template runs on Jedis (pooled) and on Lettuce (one shared connection), ");
        md.append("Redisson's `RLock` on its own client (`lockWatchdogTimeout` = the lease); Netty transport: ")
                .append(NettyTransport.describe()).append(". Per-lock figures are per held ");
        md.append("lock per lease. Script calls and their time are INFO commandstats over the hold (only the calls the ");
        md.append("library sent: commandstats also counts the commands a script runs); Redis CPU is the masters' user + ");
        md.append("system CPU; client CPU is the CPU time of the JVM's Java threads over the hold (the library's watchdog, ");
        md.append("event loops, pools and timers; not the JIT compiler's or the garbage collector's, which at 1,000 locks ");
        md.append("outweighed the renewals) less the monitor thread's; client GC CPU is the garbage collector's threads' ");
        md.append("CPU time over the hold (G1's workers, marking and refinement threads, from `/proc/self/task/*/schedstat`): ");
        md.append("the collector's work the library's objects cause, such as a remembered-set update for each new object ");
        md.append("stored into a long-lived one. The CPU figures ");
        md.append("have the library's idle cost taken off: its CPU with no lock held and the monitor reading the same keys, ");
        md.append("the mean of one lease before the hold (after an unmeasured warm-up of 1,000 locks held across a renewal) ");
        md.append("and one lease a second after release-all. \"± x\" is what a CPU figure can be off by: how far those two ");
        md.append("idle leases differed; a figure within it is no better than zero, and the chart leaves it out. Heap is the used heap after a full GC with the locks held, less ");
        md.append("before (it includes the `Lock` object and key the harness keeps per lock). The oldest lease is the ");
        md.append("largest lease age a monitor saw reading the PTTL of up to 2,000 held keys every 100 ms and of every ");
        md.append("key at the end; lateness = that age − a third of the lease (when a renewal is due), within 100 ms. ");
        md.append("Lapsed = held keys found missing, or whose unlock found them no longer held (must be 0). After release-all: the script calls in the next second ");
        md.append("(renewals still draining), and the heap and threads the JVM still has, against before the run.\n\n");
        md.append("![held locks at scale](benchmarks-scale.svg)\n\n");
        md.append("| topology | library | held locks | script calls / lock / lease | lease extensions / lock / lease "
                + "| Redis script µs / lock / lease "
                + "| Redis CPU µs / lock / lease | Redis waiting for a processor µs / lock / lease | script call µs, mean / longest "
                + "| client CPU µs / lock / lease | client CPU µs / extension | client GC CPU µs / lock / lease "
                + "| client heap bytes / lock | oldest lease ms "
                + "| lateness ms | lapsed | acquire-all ms | release-all ms | script calls in the second after release "
                + "| heap left bytes | threads left |\n");
        md.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (Row r : rows) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %,d | %.3f | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %,.0f | %,d | %,d | %d | %,d | %,d | %,d | %,d | %d |%n",
                    r.topology(), r.contender(), r.held(), r.commandsPerLockPerLease(), r.extensionsPerLockPerLease(),
                    r.redisCommandUsPerLockPerLease(),
                    withNoise(r.redisCpuUsPerLockPerLease(), r.redisCpuNoiseUs()),
                    Double.isNaN(r.redisWaitUsPerLockPerLease()) ? "not readable"
                            : String.format(Locale.ROOT, "%.2f", r.redisWaitUsPerLockPerLease()),
                    String.format(Locale.ROOT, "%s / %s", r.commandsPerLockPerLease() == 0 ? "–"
                            : String.format(Locale.ROOT, "%,.0f", r.redisCommandUsPerLockPerLease() / r.commandsPerLockPerLease()),
                            r.longestScriptCallUs() == 0 ? "< " + SLOW_MICROS
                                    : String.format(Locale.ROOT, "%,d", r.longestScriptCallUs())),
                    withNoise(r.clientCpuUsPerLockPerLease(), r.clientCpuNoiseUs()), perExtension(r),
                    Double.isNaN(r.gcCpuUsPerLockPerLease()) ? "not readable"
                            : withNoise(r.gcCpuUsPerLockPerLease(), r.gcCpuNoiseUs()),
                    r.heapBytesPerLock(), r.oldestLeaseAgeMs(),
                    r.latenessMs(), r.lapsed(), r.acquireMs(), r.releaseAllMs(), r.commandsInSecondAfterRelease(),
                    r.heapLeftBytes(), r.threadsLeft()));
        }
        md.append('\n').append(renewalRates());
        md.append('\n').append(scriptTimeAboveCpu());
        md.append('\n').append(growth());
        return md.toString();
    }

    /**
     * The rows whose script time in Redis exceeds the masters' whole CPU: INFO commandstats times a call by the clock,
     * so a call during which Redis waited for a processor counts that wait, which Redis CPU leaves out.
     */
    private String scriptTimeAboveCpu() {
        StringBuilder md = new StringBuilder("Redis script µs are the clock time INFO commandstats measures around each ");
        md.append("script call, Redis CPU µs the masters' whole CPU time (scripts included) with the idle cost taken off, ");
        md.append("and Redis waiting for a processor µs the time the masters' main threads (which run every command) ");
        md.append("spent ready to run but waiting for a processor over the hold (`/proc/<pid>/schedstat`), with the ");
        md.append("idle leases' wait taken off as for CPU. Script call µs are how long one call of the library kept Redis ");
        md.append("from every other client (Redis runs one command at a time): the mean over the hold, and the longest, ");
        md.append("from the masters' slow logs (calls of at least ").append(SLOW_MICROS).append(" µs); on a machine ");
        md.append("whose processors are all busy the longest includes the time a call waited for a processor. ");
        List<String> above = new ArrayList<>();
        for (Row r : rows) {
            if (r.redisCommandUsPerLockPerLease() > r.redisCpuUsPerLockPerLease() + r.redisCpuNoiseUs()) {
                above.add(String.format(Locale.ROOT, "%s %s at %,d (%.2f against %.2f µs%s)", r.topology(),
                        r.contender(), r.held(), r.redisCommandUsPerLockPerLease(), r.redisCpuUsPerLockPerLease(),
                        Double.isNaN(r.redisWaitUsPerLockPerLease()) ? ""
                                : String.format(Locale.ROOT, "; waiting %.2f µs", r.redisWaitUsPerLockPerLease())));
            }
        }
        if (above.isEmpty()) {
            md.append("In this run no row's script time exceeds its Redis CPU.\n");
        } else {
            md.append("Script time above the Redis CPU cannot be work Redis did; it is time a script call waited for a ");
            md.append("processor, so there the Redis CPU column measures the cost per lock and the script µs do not. ");
            md.append("Rows where it is so in this run: ").append(String.join("; ", above)).append(".\n");
        }
        return md.toString();
    }

    /**
     * How often each library renewed a lock at the largest N of each topology: a library whose renewals fall behind
     * renews each lock less often than a third of a lease, which makes its cost per lock per lease smaller and its
     * leases older (the lateness column); the cost per extension compares the work of one renewal.
     */
    private String renewalRates() {
        StringBuilder md = new StringBuilder("Lease extensions are the `PEXPIRE` commands the libraries' scripts ran over ");
        md.append("the hold (INFO commandstats counts each, also inside a script; every library here extends a lock with ");
        md.append("one, and takes none while it only holds), per held lock per lease: how often each lock was renewed. ");
        md.append("A watchdog that renews a third of a lease after the last renewal extends each lease 3 times ");
        md.append("(Redisson's); ours renews at its first look (every twelfth of the lease) a quarter of a lease or more ");
        md.append("after the last renewal, so before a third has passed even when the renewal waits its turn behind ");
        md.append("others: 3 to 4 times a lease. One whose renewals fall behind extends each lease less often, which ");
        md.append("lowers its cost per lock per lease and raises its lateness. Client CPU µs / extension is the client's ");
        md.append("CPU per lock per lease over the extensions per lock per lease: the cost of renewing one lock once.");
        List<String> largest = new ArrayList<>();
        for (String topology : topologies) {
            int most = rows.stream().filter(r -> r.topology().equals(topology)).mapToInt(Row::held).max().orElse(0);
            List<String> each = new ArrayList<>();
            for (Row r : rows) {
                if (r.topology().equals(topology) && r.held() == most) {
                    each.add(String.format(Locale.ROOT, "%s %.2f extensions a lease at %s µs each, lateness %,d ms",
                            r.contender(), r.extensionsPerLockPerLease(), perExtension(r), r.latenessMs()));
                }
            }
            if (!each.isEmpty()) {
                largest.add(String.format(Locale.ROOT, "%s, %,d locks: %s", topology, most, String.join("; ", each)));
            }
        }
        if (!largest.isEmpty()) {
            md.append(" In this run, at the largest N: ").append(String.join(". ", largest)).append('.');
        }
        return md.append('\n').toString();
    }

    /** The client's CPU per lease extension of {@code r} ("1.91"), or "–" when nothing was extended. */
    private static String perExtension(Row r) {
        return Double.isNaN(r.clientCpuUsPerExtension()) ? "–" : String.format(Locale.ROOT, "%.2f", r.clientCpuUsPerExtension());
    }

    /** A CPU figure and what it can be off by ("12.30 ± 4.10"). */
    static String withNoise(double value, double noise) {
        return String.format(Locale.ROOT, "%.2f ± %.2f", value, noise);
    }

    /** large over small, or why there is no ratio: a figure within its noise says nothing of growth. */
    private static String growthOf(double small, boolean smallWithinNoise, double large, boolean largeWithinNoise) {
        if (smallWithinNoise || largeWithinNoise) {
            return "within noise";
        }
        return String.format(Locale.ROOT, "%.2fx", large / small);
    }

    /** How each library's cost per held lock grows from the smallest N to the largest, per topology. */
    private String growth() {
        StringBuilder md = new StringBuilder("How flat: each figure at the largest N over the same figure at the smallest ");
        md.append("(1.00x is flat; \"within noise\": a CPU figure at one end is no larger than what it can be off by).\n\n| topology | library | N | client CPU / lock | Redis CPU / lock | Redis script µs / lock "
                + "| script calls / lock "
                + "| heap / lock |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
        for (String topology : topologies) {
            for (String contender : contenders) {
                List<Row> mine = rows.stream().filter(r -> r.topology().equals(topology) && r.contender().equals(contender.trim()))
                        .toList();
                if (mine.size() < 2) {
                    continue;
                }
                Row small = mine.get(0);
                Row large = mine.get(mine.size() - 1);
                md.append(String.format(Locale.ROOT, "| %s | %s | %,d → %,d | %s | %s | %.2fx | %.2fx | %.2fx |%n", topology,
                        contender.trim(), small.held(), large.held(),
                        growthOf(small.clientCpuUsPerLockPerLease(), small.clientCpuWithinNoise(),
                                large.clientCpuUsPerLockPerLease(), large.clientCpuWithinNoise()),
                        growthOf(small.redisCpuUsPerLockPerLease(), small.redisCpuWithinNoise(),
                                large.redisCpuUsPerLockPerLease(), large.redisCpuWithinNoise()),
                        large.redisCommandUsPerLockPerLease() / small.redisCommandUsPerLockPerLease(),
                        large.commandsPerLockPerLease() / small.commandsPerLockPerLease(),
                        large.heapBytesPerLock() / small.heapBytesPerLock()));
            }
        }
        return md.toString();
    }

    private static String redisVersion() {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            return Servers.info(redis.command("INFO", "server")).getOrDefault("redis_version", "?");
        }
    }

    /** Cost per held lock against N, one line per library and topology, for client CPU and Redis CPU. */
    String chart() {
        String[][] panels = {{"client CPU µs / lock / lease"}, {"Redis CPU µs / lock / lease"}};
        String[] colours = {"#2e7d32", "#81c784", "#c62828", "#1565c0", "#9e9e9e", "#f9a825"};
        int panelWidth = 420;
        int height = 330;
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                + "width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">%n", panelWidth * 2 + 40, height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        List<String> series = new ArrayList<>();
        for (String topology : topologies) {
            for (String contender : contenders) {
                series.add(topology + " " + contender.trim());
            }
        }
        for (int p = 0; p < panels.length; p++) {
            int x0 = 50 + p * (panelWidth + 20);
            int top = 30;
            int base = 240;
            int plotWidth = panelWidth - 60;
            Function<Row, Double> value = p == 0 ? Row::clientCpuUsPerLockPerLease : Row::redisCpuUsPerLockPerLease;
            java.util.function.Predicate<Row> plotted = p == 0 ? r -> !r.clientCpuWithinNoise() : r -> !r.redisCpuWithinNoise();
            double max = rows.stream().filter(plotted).mapToDouble(value::apply).max().orElse(1);
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\">%s against held locks (log scale)</text>%n", x0,
                    panels[p][0]));
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", x0, base,
                    x0 + plotWidth, base));
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", x0, top,
                    x0, base));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n", x0 - 4, top + 4,
                    LockBenchmark.format(max)));
            double minLog = Math.log10(counts.get(0));
            double maxLog = Math.log10(counts.get(counts.size() - 1));
            for (int n : counts) {
                double x = x0 + (maxLog == minLog ? 0 : (Math.log10(n) - minLog) / (maxLog - minLog) * plotWidth);
                svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%,d</text>%n", x, base + 14, n));
            }
            for (int s = 0; s < series.size(); s++) {
                String label = series.get(s);
                List<Row> line = rows.stream().filter(r -> (r.topology() + " " + r.contender()).equals(label)).toList();
                StringBuilder points = new StringBuilder();
                for (Row r : line) {
                    if (!plotted.test(r)) {
                        continue; // no better than zero: left out, as the text above the chart says
                    }
                    double x = x0 + (maxLog == minLog ? 0 : (Math.log10(r.held()) - minLog) / (maxLog - minLog) * plotWidth);
                    double y = base - (max == 0 ? 0 : value.apply(r) / max * (base - top));
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                }
                String colour = colours[s % colours.length];
                String dash = label.startsWith("cluster") ? " stroke-dasharray=\"5,3\"" : "";
                svg.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                        points.toString().trim(), colour, dash));
            }
        }
        for (int s = 0; s < series.size(); s++) {
            int x = 30 + (s % 3) * 280;
            int y = height - 50 + (s / 3) * 18;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>%n", x, y - 4, x + 20, y - 4, colours[s % colours.length],
                    series.get(s).startsWith("cluster") ? " stroke-dasharray=\"5,3\"" : "", x + 26, y, series.get(s)));
        }
        svg.append("</svg>\n");
        return svg.toString();
    }
}
