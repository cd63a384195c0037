package io.github.redislock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The child JVMs the benchmark starts: one hot-key contender, or one memory measurement. */
final class Workers {

    private Workers() {
    }

    /**
     * {@code hot-key-worker <contender> <port> <threads> <seconds> <key> <counter key> [exclusive|fair|relay <jvm>
     * <jvms>]}: its threads take the lock (with {@code fair} the library's fair lock; with {@code relay} no lock but the
     * floor's token, {@link TokenRelay}, this JVM being number {@code jvm} of {@code jvms}, on our contender's
     * connections) on the window's key from the start, and keep at it until
     * the window ends, so that every worker JVM contends with every other one until all are ready, and none runs its
     * window on code its JIT compiler compiled for a different contention (a JVM that warmed up alone at the end, its
     * peers done, compiled the hand-over to another JVM as never taken, and recompiled it in the window). It prints
     * {@code warmed-up <ms>} and {@code ready} once its JIT compiler settled ({@link #warmUpUntilCompiled}); its window
     * starts at the first line on standard input. Then it prints {@code ops <count>}: the critical sections entered in
     * the window (each a GET and SET of the counter key; before and after the window, of a warm-up counter),
     * {@code cpu <group>=<ns>,...}: the window's CPU time by thread group, and with {@code fair}
     * {@code waits <µs> <µs> ...}: how long each acquisition in the window waited.
     */
    static void hotKey(String[] args) throws Exception {
        String name = args[1];
        int port = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        long windowNanos = (long) (Double.parseDouble(args[4]) * 1e9);
        String key = args[5];
        String counterKey = args[6];
        boolean fair = args.length > 7 && args[7].equals("fair");
        boolean relayed = args.length > 7 && args[7].equals("relay");
        JedisConnectionFactory counterConnection = Contender.jedis(port);
        StringRedisTemplate counter = new StringRedisTemplate(counterConnection);
        try (Contender contender = Contender.create(name, port);
                TokenRelay relay = relayed ? new TokenRelay(((Contender.Ours) contender).connections(), key,
                        Integer.parseInt(args[8]), Integer.parseInt(args[9]), threads) : null) {
            AtomicLong total = new AtomicLong();
            List<long[]> waitsPerThread = new ArrayList<>();
            List<long[]> spansPerThread = new ArrayList<>();
            String warmUpCounterKey = counterKey + ":warm-up";
            counter.opsForValue().set(warmUpCounterKey, "0");
            // set by the main thread when the window starts; till then a day away (System.nanoTime() has no set origin)
            long later = System.nanoTime() + TimeUnit.DAYS.toNanos(1);
            AtomicLong windowStart = new AtomicLong(later);
            AtomicLong windowEnd = new AtomicLong(later);
            CountDownLatch measured = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int place = t;
                Thread worker = new Thread(() -> {
                    Lock lock = relay != null ? relay.lock(place) : fair ? contender.fairLock(key) : contender.lock(key);
                    String warmUpKey = key + ":warm-up:" + Thread.currentThread().getId();
                    Lock warmUp = relay != null ? new java.util.concurrent.locks.ReentrantLock()
                            : fair ? contender.fairLock(warmUpKey) : contender.lock(warmUpKey);
                    for (int i = 0; i < 300; i++) { // a cold JVM would spend the window compiling
                        warmUp.lock();
                        warmUp.unlock();
                    }
                    long ops = 0;
                    long[] waits = new long[1 << 14]; // recorded with or without fair: no branch either
                    // each critical section's entry and the moment it calls unlock (System.nanoTime(), one clock for
                    // every JVM of the host): the controller takes the hand-overs' gaps from them
                    long[] spans = new long[2 << 14];
                    String[] counters = {counterKey, warmUpCounterKey};
                    while (true) {
                        long asked = System.nanoTime();
                        lock.lock();
                        long entered = System.nanoTime();
                        if (entered - windowEnd.get() >= 0) {
                            lock.unlock();
                            awaitQuietly(measured); // alive until the window's CPU time is read, so counted in it
                            if (relay != null) {
                                relay.leave(place);
                            }
                            break;
                        }
                        // a critical section entered in the window counts, and increments the counter checked after
                        // it. Told apart without a branch: this loop is compiled while warming up, and a branch first
                        // taken when the window starts would have it compiled again, in the window
                        int warmingUp = (int) ((entered - windowStart.get()) >>> 63);
                        waits[(int) ops] = entered - asked;
                        spans[2 * (int) ops] = entered;
                        try {
                            increment(counter, counters[warmingUp]);
                        } finally {
                            spans[2 * (int) ops + 1] = System.nanoTime();
                            lock.unlock();
                        }
                        ops += 1 - warmingUp;
                        if (ops == waits.length) {
                            waits = Arrays.copyOf(waits, waits.length * 2);
                            spans = Arrays.copyOf(spans, spans.length * 2);
                        }
                    }
                    total.addAndGet(ops);
                    synchronized (spansPerThread) {
                        spansPerThread.add(Arrays.copyOf(spans, 2 * (int) ops));
                    }
                    if (fair) {
                        synchronized (waitsPerThread) {
                            waitsPerThread.add(Arrays.copyOf(waits, (int) ops));
                        }
                    }
                });
                // a thread that dies (in the warm-up, say) ends the JVM with a line saying why, so the controller,
                // waiting for "ready" or "ops", is not left waiting for ever
                worker.setUncaughtExceptionHandler((thread, e) -> {
                    System.out.println("worker-failed " + e.toString().replace('\n', ' '));
                    System.out.flush();
                    Runtime.getRuntime().halt(2);
                });
                worker.setName("hot-key-worker-" + t);
                workers.add(worker);
                worker.start();
            }
            long warmUpMillis = warmUpUntilCompiled(windowNanos);
            WindowCpu cpu = new WindowCpu(); // its own code runs once before the window, so is not compiled in it
            cpu.start();
            cpu.end();
            System.out.println("warmed-up " + warmUpMillis);
            System.out.println("ready");
            // the controller answers once every worker JVM is ready: all start their window together
            new BufferedReader(new InputStreamReader(System.in)).readLine();
            cpu.start();
            long start = System.nanoTime();
            windowEnd.set(start + windowNanos);
            windowStart.set(start);
            TimeUnit.NANOSECONDS.sleep(windowNanos);
            String spent = cpu.end();
            measured.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
            System.out.println("ops " + total.get());
            System.out.println("cpu " + spent);
            System.out.println("switches " + cpu.switches);
            System.out.println(line("spans", spansPerThread, 1));
            if (fair) {
                System.out.println(line("waits", waitsPerThread, 1000));
            }
        } finally {
            counterConnection.destroy();
        }
        System.exit(0);
    }

    /** {@code name} and every value of {@code perThread} divided by {@code divisor}, on one line. */
    private static String line(String name, List<long[]> perThread, long divisor) {
        StringBuilder line = new StringBuilder(name);
        for (long[] values : perThread) {
            for (long value : values) {
                line.append(' ').append(value / divisor);
            }
        }
        return line.toString();
    }

    /**
     * A window's CPU time by thread group: each Java thread's (by name, its numbers left out), each group of the JVM's
     * own threads (JIT compilers, GC, the VM thread: {@code jvm:} and their Linux names, read from /proc in ticks of
     * 10 ms) and {@code other}: what the process spent besides (threads started and ended within the window).
     */
    private static final class WindowCpu {

        private Map<Long, String> names;
        private Map<Long, Long> threadsBefore;
        private Map<String, Long> jvmBefore;
        private long processBefore;
        private Map<String, Long> switchesBefore;
        /**
         * Context switches of the process's threads in the window (from /proc; 0 where it cannot be read), less those
         * of threads that ended within it.
         */
        long switches;

        void start() {
            Tasks tasks = Tasks.read(true);
            switchesBefore = tasks.switches();
            names = threadNames();
            jvmBefore = tasks.jvmTicks();
            threadsBefore = ThreadTotals.cpuNanos();
            processBefore = PROCESS.getProcessCpuTime();
        }

        /** {@code group=ns} pairs separated by commas. */
        String end() {
            long process = PROCESS.getProcessCpuTime() - processBefore;
            Tasks tasks = Tasks.read(true);
            switches = 0;
            tasks.switches().forEach((thread, count) -> switches += count - switchesBefore.getOrDefault(thread, 0L));
            Map<Long, Long> threadsAfter = ThreadTotals.cpuNanos();
            Map<String, Long> jvmAfter = tasks.jvmTicks();
            names.putAll(threadNames());
            Map<String, Long> byGroup = new TreeMap<>();
            long listed = 0;
            for (Map.Entry<Long, Long> thread : threadsAfter.entrySet()) {
                long spent = thread.getValue() - threadsBefore.getOrDefault(thread.getKey(), 0L);
                String group = names.getOrDefault(thread.getKey(), "").replaceAll("[-#]?\\d+", "").replace(' ', '_');
                byGroup.merge(group.isEmpty() ? "unnamed" : group, spent, Long::sum);
                listed += spent;
            }
            for (Map.Entry<String, Long> group : jvmAfter.entrySet()) {
                long spent = (group.getValue() - jvmBefore.getOrDefault(group.getKey(), 0L)) * 10_000_000L;
                byGroup.merge(group.getKey(), spent, Long::sum);
                listed += spent;
            }
            byGroup.put("other", Math.max(0, process - listed));
            StringBuilder line = new StringBuilder();
            byGroup.forEach((group, nanos) -> line.append(line.length() == 0 ? "" : ",").append(group).append('=')
                    .append(nanos));
            return line.toString();
        }
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean PROCESS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private static Map<Long, String> threadNames() {
        Map<Long, String> names = new HashMap<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            names.put(thread.getId(), thread.getName());
        }
        return names;
    }

    /** The JVM's own threads (not Java threads) by name, from Linux's /proc: the JIT compilers, the GC, the VM thread. */
    private static final java.util.regex.Pattern JVM_THREAD =
            java.util.regex.Pattern.compile("VM Thread|GC Thread.*|G1 .*|C[12] CompilerThre.*|VM Periodic.*|Sweeper.*");

    /**
     * One read of this process's live threads in Linux's /proc (empty where it cannot be read): the CPU clock ticks
     * (1/100 s) so far of each group of the JVM's own threads ({@code jvm:} and their name), and, when asked, the context
     * switches, voluntary and not, of every thread so far (by thread id).
     */
    private record Tasks(Map<String, Long> jvmTicks, Map<String, Long> switches) {

        static Tasks read(boolean withSwitches) {
            Map<String, Long> ticks = new TreeMap<>();
            Map<String, Long> switches = new HashMap<>();
            java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
            for (java.io.File task : tasks == null ? new java.io.File[0] : tasks) {
                try {
                    String stat = java.nio.file.Files.readString(task.toPath().resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    if (JVM_THREAD.matcher(name).matches()) {
                        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        long spent = Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
                        ticks.merge("jvm:" + name.replaceAll("#\\d+$", "").replace(' ', '_'), spent, Long::sum);
                    }
                    if (withSwitches) {
                        long count = 0;
                        for (String line : java.nio.file.Files.readAllLines(task.toPath().resolve("status"))) {
                            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                                count += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                            }
                        }
                        switches.put(task.getName(), count);
                    }
                } catch (java.io.IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
            return new Tasks(ticks, switches);
        }
    }

    /** The critical section: GET then SET, not atomic, so only the lock keeps the shared counter exact. */
    private static void increment(StringRedisTemplate counter, String key) {
        long value = Long.parseLong(counter.opsForValue().get(key));
        counter.opsForValue().set(key, Long.toString(value + 1));
    }

    /** The longest warm-up of a hot-key worker JVM, whatever its JIT compiler is still doing by then. */
    static final long MAX_WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(120);
    /** Settled: the JIT compiler threads' CPU time in each of the latest two seconds, at most 2 % of it. */
    private static final long SETTLED_COMPILE_MILLIS = 20;

    /**
     * Waits while the worker threads warm up, at least {@code minNanos}, until the JIT compiler has settled: its threads
     * spent at most 2 % of each of the latest two seconds compiling (or {@link #MAX_WARM_UP_NANOS} passed). A window measured while
     * several JVMs still compile on a small machine measures the compiler: Netty-based clients (Lettuce, Redisson) take
     * many seconds to compile their hot paths there. The compiler's CPU time is read from Linux's /proc (its threads
     * are not Java threads); elsewhere the JVM's own compilation time stands in for it, which left C2 compiling for
     * a third of the window's CPU time on this benchmark's machine (2026-11-28): it is told late, per compilation done.
     *
     * @return how long the warm-up took, in ms
     */
    static long warmUpUntilCompiled(long minNanos) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long start = System.nanoTime();
        long[] compiled = new long[5]; // now, half a second ago, ..., two seconds ago
        compiled[0] = compilerMillis(jit);
        while (true) {
            Thread.sleep(500);
            long now = System.nanoTime();
            System.arraycopy(compiled, 0, compiled, 1, compiled.length - 1);
            compiled[0] = compilerMillis(jit);
            boolean settled = now - start >= 2_000_000_000L && compiled[0] - compiled[2] <= SETTLED_COMPILE_MILLIS
                    && compiled[2] - compiled[4] <= SETTLED_COMPILE_MILLIS;
            if ((settled && now - start >= minNanos) || now - start >= MAX_WARM_UP_NANOS) {
                return TimeUnit.NANOSECONDS.toMillis(now - start);
            }
        }
    }

    /** The JIT compiler threads' CPU time so far, ms, from /proc; the JVM's compilation time where it cannot be read. */
    private static long compilerMillis(CompilationMXBean jit) {
        Map<String, Long> ticks = Tasks.read(false).jvmTicks();
        if (ticks.isEmpty()) {
            return jit.getTotalCompilationTime();
        }
        return 10 * (ticks.getOrDefault("jvm:C1_CompilerThre", 0L) + ticks.getOrDefault("jvm:C2_CompilerThre", 0L));
    }

    /**
     * {@code memory-worker <contender> <port> <locks>}: prints {@code memory <bytes per held lock> <KB retained> <locks
     * lost while held>}, or {@code memory-failed <what went wrong>}; never exits without a line saying which.
     */
    static void memory(String[] args) {
        try {
            measureMemory(args);
        } catch (Throwable e) {
            System.out.println("memory-failed " + e.toString().replace('\n', ' '));
            System.out.flush();
            System.exit(2);
        }
        System.exit(0);
    }

    private static void measureMemory(String[] args) throws Exception {
        String name = args[1];
        int port = Integer.parseInt(args[2]);
        int count = Integer.parseInt(args[3]);
        try (Contender contender = Contender.create(name, port)) {
            List<String> keys = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                keys.add("s6:" + name + ":" + i);
            }
            // a cycle first, so pools and JIT settle; a tenth of the locks, so that containers growing with the
            // number of held locks are counted below
            holdAndRelease(contender, keys.subList(0, count / 10));
            long before = usedHeap();
            long libraryBefore = libraryBytes(name);
            List<Lock> held = new ArrayList<>(count);
            for (String key : keys) {
                Lock lock = contender.lock(key);
                lock.lock();
                held.add(lock);
            }
            long holding = usedHeap();
            // a lock lost while held (its renewals fell behind) fails its unlock: counted and reported, not fatal
            int lost = 0;
            RuntimeException firstLoss = null;
            for (Lock lock : held) {
                try {
                    lock.unlock();
                } catch (RuntimeException e) {
                    lost++;
                    firstLoss = firstLoss == null ? e : firstLoss;
                }
            }
            held.clear();
            Thread.sleep(1000); // let asynchronous clean-up (renewal timers, caches) run
            usedHeap();
            long libraryAfter = libraryBytes(name);
            if (firstLoss != null) {
                System.out.println("memory-lost " + firstLoss.toString().replace('\n', ' '));
            }
            System.out.printf(Locale.ROOT, "memory %.1f %.1f %d%n", (holding - before) / (double) count,
                    (libraryAfter - libraryBefore) / 1024.0, lost);
            System.out.flush();
        }
    }

    private static void holdAndRelease(Contender contender, List<String> keys) {
        List<Lock> held = new ArrayList<>(keys.size());
        for (String key : keys) {
            Lock lock = contender.lock(key);
            lock.lock();
            held.add(lock);
        }
        held.forEach(Lock::unlock);
    }

    /**
     * Live bytes of the library's own classes (a class histogram after a full GC): what a release
     * must give back. Heap totals are too noisy for this; class counts are exact.
     */
    private static long libraryBytes(String contender) throws Exception {
        String prefix = switch (contender) {
            case "redis-lock", "redis-lock-lettuce" -> "io.github.redislock.core";
            case "redisson" -> "org.redisson";
            default -> "org.springframework.integration";
        };
        Process jcmd = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(ProcessHandle.current().pid()), "GC.class_histogram").redirectErrorStream(true).start();
        long bytes = 0;
        for (String line : new String(jcmd.getInputStream().readAllBytes()).split("\n")) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length >= 4 && columns[3].startsWith(prefix)) {
                bytes += Long.parseLong(columns[2]);
            }
        }
        jcmd.waitFor();
        return bytes;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long usedHeap() throws InterruptedException {
        Runtime runtime = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, runtime.totalMemory() - runtime.freeMemory());
        }
        return used;
    }
}
