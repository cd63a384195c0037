package io.github.redislock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The child JVMs the benchmark starts: one hot-key contender, or one memory measurement. */
final class Workers {

    private Workers() {
    }

    /**
     * {@code hot-key-worker <contender> <port> <threads> <seconds> <key> <counter key> [exclusive|fair]}: warms up
     * until its JIT compiler settles ({@link #warmUpUntilCompiled}), prints {@code warmed-up <ms>} and {@code ready},
     * starts its window at the first line on standard input, prints {@code ops <count>}. With
     * {@code fair} it takes the library's fair lock and also prints {@code waits <µs> <µs> ...}: how long each
     * acquisition in the window waited.
     */
    static void hotKey(String[] args) throws Exception {
        String name = args[1];
        int port = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        long windowNanos = (long) (Double.parseDouble(args[4]) * 1e9);
        String key = args[5];
        String counterKey = args[6];
        boolean fair = args.length > 7 && args[7].equals("fair");
        JedisConnectionFactory counterConnection = Contender.jedis(port);
        StringRedisTemplate counter = new StringRedisTemplate(counterConnection);
        try (Contender contender = Contender.create(name, port)) {
            AtomicLong total = new AtomicLong();
            List<long[]> waitsPerThread = new ArrayList<>();
            String warmUpCounterKey = counterKey + ":warm-up";
            counter.opsForValue().set(warmUpCounterKey, "0");
            AtomicBoolean warming = new AtomicBoolean(true);
            CountDownLatch warmedUp = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread worker = new Thread(() -> {
                    Lock lock = fair ? contender.fairLock(key) : contender.lock(key);
                    String warmUpKey = key + ":warm-up:" + Thread.currentThread().getId();
                    Lock warmUp = fair ? contender.fairLock(warmUpKey) : contender.lock(warmUpKey);
                    for (int i = 0; i < 300; i++) { // a cold JVM would spend the window compiling
                        warmUp.lock();
                        warmUp.unlock();
                    }
                    // then on one key shared by every thread and worker JVM until the JIT settles: the wait, the
                    // release notice and the hand-over are compiled too (a client on Netty, Lettuce or Redisson,
                    // measured cold, spends most of a short window compiling them)
                    Lock sharedWarmUp = fair ? contender.fairLock(key + ":warm-up") : contender.lock(key + ":warm-up");
                    while (warming.get()) {
                        sharedWarmUp.lock();
                        try { // the window's critical section too: its Spring Data Redis path is compiled as well
                            increment(counter, warmUpCounterKey);
                        } finally {
                            sharedWarmUp.unlock();
                        }
                    }
                    warmedUp.countDown();
                    awaitQuietly(go);
                    long end = System.nanoTime() + windowNanos;
                    long ops = 0;
                    long[] waits = new long[fair ? 1024 : 0];
                    while (System.nanoTime() < end) {
                        long asked = fair ? System.nanoTime() : 0;
                        lock.lock();
                        if (fair) {
                            if (ops == waits.length) {
                                waits = Arrays.copyOf(waits, waits.length * 2);
                            }
                            waits[(int) ops] = System.nanoTime() - asked;
                        }
                        try {
                            increment(counter, counterKey);
                        } finally {
                            lock.unlock();
                        }
                        ops++;
                    }
                    total.addAndGet(ops);
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
                workers.add(worker);
                worker.start();
            }
            long warmUpMillis = warmUpUntilCompiled(windowNanos);
            warming.set(false);
            warmedUp.await();
            System.out.println("warmed-up " + warmUpMillis);
            System.out.println("ready");
            // the controller answers once every worker JVM is ready: all start their window together
            new BufferedReader(new InputStreamReader(System.in)).readLine();
            go.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
            System.out.println("ops " + total.get());
            if (fair) {
                StringBuilder line = new StringBuilder("waits");
                for (long[] waits : waitsPerThread) {
                    for (long nanos : waits) {
                        line.append(' ').append(nanos / 1000);
                    }
                }
                System.out.println(line);
            }
        } finally {
            counterConnection.destroy();
        }
        System.exit(0);
    }

    /** The critical section: GET then SET, not atomic, so only the lock keeps the shared counter exact. */
    private static void increment(StringRedisTemplate counter, String key) {
        long value = Long.parseLong(counter.opsForValue().get(key));
        counter.opsForValue().set(key, Long.toString(value + 1));
    }

    /** The longest warm-up of a hot-key worker JVM, whatever its JIT compiler is still doing by then. */
    static final long MAX_WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** Settled: at most this much compiling (2 %) in the latest half second. */
    private static final long SETTLED_COMPILE_MILLIS = 10;

    /**
     * Waits while the worker threads warm up, at least {@code minNanos}, until the JIT compiler has settled: it spent
     * under 2 % of the latest half second compiling (or {@link #MAX_WARM_UP_NANOS} passed). A window measured while
     * several JVMs still compile on a small machine measures the compiler: Netty-based clients (Lettuce, Redisson) take
     * seconds to compile their hot paths there, and a short window after a short warm-up (which left out the critical
     * section's GET and SET) ran far slower than the same contenders kept up over a long one.
     *
     * @return how long the warm-up took, in ms
     */
    static long warmUpUntilCompiled(long minNanos) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long start = System.nanoTime();
        long compiled = jit.getTotalCompilationTime();
        while (true) {
            Thread.sleep(500);
            long now = System.nanoTime();
            long compiledNow = jit.getTotalCompilationTime();
            boolean settled = compiledNow - compiled <= SETTLED_COMPILE_MILLIS;
            compiled = compiledNow;
            if ((settled && now - start >= minNanos) || now - start >= MAX_WARM_UP_NANOS) {
                return TimeUnit.NANOSECONDS.toMillis(now - start);
            }
        }
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
