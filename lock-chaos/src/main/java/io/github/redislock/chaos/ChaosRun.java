package io.github.redislock.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.redislock.test.RedisServerProcess;

/**
 * The fault-injection controller: starts a Redis, a TCP proxy in front of it, the resource process
 * and 4 worker JVMs x 2 threads, injects each fault {@code repetitions} times, and checks the
 * recorded history. {@code main} runs the full suite and writes {@code docs/reliability.md}.
 * <p>
 * The Sentinel failover scenarios ({@link SentinelFailover}) follow, {@code -Dchaos.failover-trials=10} trials each.
 * {@code -Dchaos.repetitions=20} (default), {@code -Dchaos.docs=docs}, {@code -Dchaos.only=} (run only scenarios whose
 * name contains it), {@code -Dchaos.failures=lock-chaos/target/chaos-failures} (where a failed scenario's history goes).
 */
public final class ChaosRun implements AutoCloseable {

    static final long LEASE_MILLIS = 1000;
    static final int WORKERS = 4;
    static final int THREADS = 2;
    /** Waits for a worker to read the resource, per pause. */
    static final int PAUSE_ATTEMPTS = 3;
    /**
     * The longest TTL the engine gives a key a stopped worker may leave: a waiter entry lives up to the
     * holder's remaining lease plus a second ({@code acquire.lua}); the fence counter a second, the lock a lease.
     */
    static final long LONGEST_KEY_TTL_MILLIS = LEASE_MILLIS + 1000;
    /** How long a stopped worker may take to finish: its wait for the lock (5 s), its section, and its report. */
    static final long WORKER_EXIT_SECONDS = 30;

    /** What a scenario promises about overlapping critical sections. */
    public enum Promise {
        /** No two critical sections overlap. */
        EXCLUSION("exclusion"),
        /**
         * A paused holder may overlap its successor (a pause can land between its {@code isHeld()} check and
         * its write; only fencing closes that), but no two other sections overlap: the paused holder's
         * release deleted nobody else's lock.
         */
        EXCLUSION_APART_FROM_PAUSED("exclusion apart from the paused holder; loss signalled"),
        /** Overlaps are measured; the fenced resource must refuse every stale write. */
        FENCING_ONLY("fencing only");

        final String text;

        Promise(String text) {
            this.text = text;
        }
    }

    /** One scenario's outcome. */
    public record Outcome(String scenario, Promise promise, boolean fenced, int repetitions, HistoryChecker.Verdict verdict,
            int lossSignalled, int lossExpected, String leftovers) {
    }

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final Map<String, Process> workers = new ConcurrentHashMap<>();
    /** The thread reading each process's output; joined before a stopped worker's report is read. */
    private final Map<Process, Thread> readers = new ConcurrentHashMap<>();
    private final List<Process> allProcesses = new ArrayList<>();
    private final List<String> workerOutput = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Everything the worker JVMs of the current scenario printed (engine warnings, failed sections), for a failed scenario's report. */
    private final List<String> workerLog = java.util.Collections.synchronizedList(new ArrayList<>());
    private final int resourcePort = RedisServerProcess.freePort();
    private final Process resource;
    private RedisServerProcess redis;
    private TcpProxy proxy;
    private final Signals signals = new Signals();

    public ChaosRun() throws IOException, InterruptedException {
        resource = start(List.of(Resource.class.getName(), String.valueOf(resourcePort)), "resource ready");
        Runtime.getRuntime().addShutdownHook(new Thread(this::destroyAll));
    }

    public static void main(String[] args) throws Exception {
        int repetitions = Integer.getInteger("chaos.repetitions", 20);
        int failoverTrials = Integer.getInteger("chaos.failover-trials", 10);
        try (ChaosRun run = new ChaosRun()) {
            List<Outcome> outcomes = run.all(repetitions);
            List<SentinelFailover.Outcome> failovers = SentinelFailover.all(failoverTrials, System.getProperty("chaos.only", ""));
            String report = report(outcomes, repetitions) + (failovers.isEmpty() ? "" : SentinelFailover.report(failovers));
            System.out.println(report);
            String docs = System.getProperty("chaos.docs", "docs");
            if (!docs.isEmpty()) {
                Files.createDirectories(Path.of(docs));
                Files.writeString(Path.of(docs, "reliability.md"), report);
                System.out.println("Wrote " + Path.of(docs, "reliability.md"));
            }
            List<String> failures = failures(outcomes);
            failovers.forEach(failover -> failures.addAll(failover.failures()));
            if (!failures.isEmpty()) {
                System.err.println("FAILED: " + failures);
                System.exit(1);
            }
        }
        System.exit(0);
    }

    /** Every scenario of the suite. */
    public List<Outcome> all(int repetitions) throws Exception {
        List<Outcome> outcomes = new ArrayList<>();
        List<String> plainRedis = List.of();
        outcomes.add(scenario("no faults", Promise.EXCLUSION, plainRedis, true, true, 0, 6, this::noFault));
        outcomes.add(scenario("kill -9 of the holder", Promise.EXCLUSION, plainRedis, true, true, repetitions, 0,
                this::killHolder));
        outcomes.add(scenario("SIGSTOP of the holder for 2.5x its lease, holder checks isHeld()",
                Promise.EXCLUSION_APART_FROM_PAUSED, plainRedis, true, true, repetitions, 0, this::pauseHolder));
        outcomes.add(scenario("SIGSTOP of the holder for 2.5x its lease, holder writes blindly",
                Promise.EXCLUSION_APART_FROM_PAUSED, plainRedis, true, false, repetitions, 0, this::pauseHolder));
        outcomes.add(scenario("SIGSTOP of the holder for 2.5x its lease, holder writes blindly, resource unfenced",
                Promise.EXCLUSION_APART_FROM_PAUSED, plainRedis, false, false, repetitions, 0, this::pauseHolder));
        outcomes.add(scenario("Redis restart without persistence", Promise.FENCING_ONLY, plainRedis, true, true, repetitions,
                0, this::restartRedis));
        outcomes.add(scenario("Redis restart with AOF (appendfsync always)", Promise.EXCLUSION,
                List.of("--appendonly", "yes", "--appendfsync", "always"), true, true, repetitions, 0, this::restartRedis));
        outcomes.add(scenario("proxy adds 150 ms latency for 2 s", Promise.EXCLUSION, plainRedis, true, true, repetitions, 0,
                this::latency));
        outcomes.add(scenario("proxy blackholes Redis for 2.5x the lease", Promise.EXCLUSION, plainRedis, true, true,
                repetitions, 0, this::blackhole));
        outcomes.add(scenario("proxy resets every connection", Promise.EXCLUSION, plainRedis, true, true, repetitions, 0,
                this::resetConnections));
        outcomes.removeIf(java.util.Objects::isNull);
        return outcomes;
    }

    /** The self-test: a deliberately broken lock (GET, then SET) under no faults. */
    public HistoryChecker.Verdict brokenLock(long seconds) throws Exception {
        redis = RedisServerProcess.start();
        try (TcpProxy p = new TcpProxy(redis.port())) {
            proxy = p;
            post("/reset?fenced=false");
            long endAt = System.currentTimeMillis() + seconds * 1000;
            for (int w = 0; w < WORKERS; w++) {
                startWorker("w" + w, endAt, true, "broken");
            }
            awaitWorkers();
            return HistoryChecker.check(history(), value());
        } finally {
            redis.close();
        }
    }

    @FunctionalInterface
    interface Fault {
        /** Injects the fault once; returns the fencing token the holder had, or 0. */
        long inject(int repetition) throws Exception;
    }

    private Outcome scenario(String name, Promise promise, List<String> redisArgs, boolean fenced, boolean checkHeld,
            int repetitions, long faultFreeSeconds, Fault fault) throws Exception {
        if (!name.contains(System.getProperty("chaos.only", ""))) {
            return null;
        }
        System.out.println("scenario: " + name);
        redis = RedisServerProcess.start(redisArgs);
        try (TcpProxy p = new TcpProxy(redis.port())) {
            proxy = p;
            post("/reset?fenced=" + fenced);
            workerLog.clear();
            long endAt = System.currentTimeMillis() + 3_000_000; // stopped explicitly below
            for (int w = 0; w < WORKERS; w++) {
                startWorker("w" + w, endAt, checkHeld, "engine");
            }
            Thread.sleep(1500);
            List<Long> pausedTokens = new ArrayList<>();
            if (faultFreeSeconds > 0) {
                Thread.sleep(faultFreeSeconds * 1000);
            }
            for (int r = 0; r < repetitions; r++) {
                long token = fault.inject(r);
                if (token > 0) {
                    pausedTokens.add(token);
                }
                Thread.sleep(1500); // recovery, and a stretch of normal work
            }
            String leftovers = stopWorkersAndCollectLeftovers();
            List<Event> history = history();
            HistoryChecker.Verdict verdict = HistoryChecker.check(history, value(), java.util.Set.copyOf(pausedTokens));
            int signalled = (int) pausedTokens.stream().filter(verdict.lostTokens()::contains).count();
            Outcome outcome = new Outcome(name, promise, fenced, repetitions, verdict, signalled, pausedTokens.size(), leftovers);
            if (!failures(List.of(outcome)).isEmpty()) {
                keepHistory(outcome, pausedTokens, history, workerLog);
            }
            return outcome;
        } finally {
            redis.close();
        }
    }

    /** Writes a failed scenario's history where CI keeps it, for diagnosis. */
    private static void keepHistory(Outcome outcome, List<Long> pausedTokens, List<Event> history, List<String> log)
            throws IOException {
        // lock-chaos/target/chaos-failures both from the repository's root (ChaosRun.main) and from the module (verify)
        String module = Files.isDirectory(Path.of("lock-chaos")) ? "lock-chaos/" : "";
        Path dir = Path.of(System.getProperty("chaos.failures", module + "target/chaos-failures"));
        Files.createDirectories(dir);
        Path file = dir.resolve(outcome.scenario().replaceAll("[^A-Za-z0-9]+", "-") + "-" + System.currentTimeMillis() + ".txt");
        StringBuilder text = new StringBuilder(failures(List.of(outcome)) + "\npaused tokens " + pausedTokens + "\n");
        history.forEach(e -> text.append(e.line()).append('\n'));
        text.append("\nworker output:\n");
        synchronized (log) {
            log.forEach(line -> text.append(line).append('\n'));
        }
        Files.writeString(file, text);
        System.out.println("history of the failed scenario: " + file.toAbsolutePath());
    }

    // faults -------------------------------------------------------------------------------------

    private long noFault(int repetition) {
        return 0;
    }

    private long killHolder(int repetition) throws Exception {
        String[] holder = holder();
        if (holder == null) {
            return 0;
        }
        String id = holder[0].substring(0, holder[0].indexOf('-'));
        Process process = workers.remove(id);
        process.destroyForcibly().waitFor();
        mark("kill-" + repetition + "-end");
        startWorker(id + "r" + repetition, System.currentTimeMillis() + 3_000_000, true, "engine");
        return 0;
    }

    /**
     * Stops a holder inside its critical section for 2.5 leases. The resource holds back the reply to the next
     * read ({@code /trap}); its worker has then certainly entered its section and cannot have left it, so
     * stopping it before the reply goes out catches it there every time, however loaded the machine is.
     */
    private long pauseHolder(int repetition) throws Exception {
        for (int attempt = 0; attempt < PAUSE_ATTEMPTS; attempt++) {
            post("/trap");
            String[] caught = trapped();
            Process process = caught == null ? null : workers.get(caught[0].substring(0, caught[0].indexOf('-')));
            if (process == null) { // no read within the wait, or a killed worker's: let it go and try again
                post("/spring");
                continue;
            }
            signal(process, "STOP");
            post("/spring"); // the read's reply reaches a stopped process: it stays inside its section
            Thread.sleep(LEASE_MILLIS * 5 / 2);
            signal(process, "CONT");
            mark("pause-" + repetition + "-end");
            return Long.parseLong(caught[1]);
        }
        throw new IllegalStateException("no worker read the resource in " + PAUSE_ATTEMPTS + " waits of 5 s: "
                + "the workers are not running sections");
    }

    /** The worker thread and token whose read the resource holds back, waiting up to 5 s for one. */
    private String[] trapped() throws Exception {
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end) {
            String trapped = get("/trapped");
            if (!trapped.isBlank()) {
                return trapped.split(" ");
            }
            Thread.sleep(2);
        }
        return null;
    }

    private long restartRedis(int repetition) throws Exception {
        redis.restart();
        mark("restart-" + repetition + "-end");
        return 0;
    }

    private long latency(int repetition) throws Exception {
        proxy.latency(150);
        Thread.sleep(2000);
        proxy.latency(0);
        mark("latency-" + repetition + "-end");
        return 0;
    }

    private long blackhole(int repetition) throws Exception {
        proxy.blackhole(true);
        Thread.sleep(LEASE_MILLIS * 5 / 2);
        proxy.blackhole(false);
        mark("blackhole-" + repetition + "-end");
        return 0;
    }

    private long resetConnections(int repetition) throws Exception {
        proxy.resetConnections();
        mark("reset-" + repetition + "-end");
        return 0;
    }

    // processes ----------------------------------------------------------------------------------

    private void startWorker(String id, long endAt, boolean checkHeld, String lock) throws IOException, InterruptedException {
        workers.put(id, start(List.of(Worker.class.getName(), id, String.valueOf(proxy.port()), String.valueOf(resourcePort),
                String.valueOf(THREADS), String.valueOf(LEASE_MILLIS), String.valueOf(checkHeld), String.valueOf(endAt), lock),
                "worker " + id + " ready"));
    }

    private Process start(List<String> mainAndArgs, String readyLine) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.log.io.github.redislock=debug", "-cp",
                System.getProperty("java.class.path")));
        command.addAll(mainAndArgs);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        synchronized (allProcesses) {
            allProcesses.add(process);
        }
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream()))) {
                for (String line; (line = out.readLine()) != null;) {
                    if (line.startsWith(readyLine)) {
                        ready.countDown();
                    }
                    if (line.startsWith("leftovers")) {
                        workerOutput.add(line);
                    }
                    workerLog.add(System.nanoTime() + " " + mainAndArgs.get(1) + ": " + line);
                }
            } catch (IOException ignored) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        readers.put(process, reader);
        reader.start();
        if (!ready.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("process did not start: " + mainAndArgs);
        }
        return process;
    }

    private String stopWorkersAndCollectLeftovers() throws Exception {
        workerOutput.clear();
        int running = workers.size();
        for (Process process : workers.values()) {
            process.getOutputStream().close(); // the worker finishes its section, reports and exits
        }
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Process> worker : workers.entrySet()) {
            Process process = worker.getValue();
            // a waiting thread may wait out its 5 s before it sees the stop
            if (!process.waitFor(WORKER_EXIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS)) {
                problems.add("worker " + worker.getKey() + " did not exit within " + WORKER_EXIT_SECONDS + " s");
                process.destroyForcibly();
            }
            Thread reader = readers.remove(process);
            if (reader != null) {
                reader.join(10_000); // its last line, the leftovers report, is read
            }
        }
        workers.clear();
        long dirtyWorkers = workerOutput.stream().filter(line -> !line.equals("leftovers renewals=0 locks=0")).count();
        if (dirtyWorkers > 0 || workerOutput.size() < running) {
            problems.add("worker renewal entries or local locks " + workerOutput);
        }
        // Every key the engine writes carries a TTL of at most LONGEST_KEY_TTL_MILLIS, counted from the last
        // command of a worker that has exited now; whatever is still there after that was left behind.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(LONGEST_KEY_TTL_MILLIS);
        String keys;
        String channels;
        do {
            Thread.sleep(50);
            keys = redis.command("KEYS", "redis-lock:*");
            channels = redis.command("PUBSUB", "CHANNELS", "redis-lock:*");
        } while (System.nanoTime() - deadline < 0 && !(isBlank(keys) && isBlank(channels)));
        if (!isBlank(keys)) {
            problems.add("keys " + keys.replace('\n', ' '));
        }
        if (!isBlank(channels)) {
            problems.add("channels " + channels.replace('\n', ' '));
        }
        return problems.isEmpty() ? "none" : String.join("; ", problems);
    }

    private static boolean isBlank(String reply) {
        return reply == null || reply.isBlank();
    }

    private void signal(Process process, String signal) throws IOException {
        signals.send(process.pid(), signal);
    }

    private void awaitWorkers() throws InterruptedException {
        for (Process process : workers.values()) {
            process.waitFor();
        }
        workers.clear();
    }

    private void destroyAll() {
        synchronized (allProcesses) {
            for (Process process : allProcesses) {
                process.destroyForcibly();
            }
        }
    }

    @Override
    public void close() {
        destroyAll();
        signals.close();
        if (redis != null) {
            redis.close();
        }
    }

    // resource -----------------------------------------------------------------------------------

    /** The live worker in a critical section now (a killed worker's unfinished section is skipped), and its token. */
    private String[] holder() throws Exception {
        for (int i = 0; i < 300; i++) {
            String holder = get("/holder");
            if (!holder.isBlank()) {
                String[] workerAndToken = holder.split(" ");
                String id = workerAndToken[0].substring(0, workerAndToken[0].indexOf('-'));
                if (workers.containsKey(id)) {
                    return workerAndToken;
                }
            }
            Thread.sleep(10);
        }
        return null;
    }

    private List<Event> history() throws Exception {
        List<Event> events = new ArrayList<>();
        for (String line : get("/history").split("\n")) {
            if (!line.isBlank() && !line.startsWith("value")) {
                events.add(Event.parse(line));
            }
        }
        return events;
    }

    private long value() throws Exception {
        String[] lines = get("/history").split("\n");
        return Long.parseLong(lines[lines.length - 1].substring("value ".length()).trim());
    }

    private void mark(String name) throws Exception {
        post("/mark?name=" + name);
    }

    private String get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + resourcePort + path)).timeout(Duration.ofSeconds(10))
                .GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private String post(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + resourcePort + path)).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    // report -------------------------------------------------------------------------------------

    public static List<String> failures(List<Outcome> outcomes) {
        List<String> failures = new ArrayList<>();
        for (Outcome o : outcomes) {
            HistoryChecker.Verdict v = o.verdict();
            if (o.promise() == Promise.EXCLUSION && v.overlaps() > 0) {
                failures.add(o.scenario() + ": " + v.overlaps() + " overlapping critical sections");
            }
            if (o.promise() == Promise.EXCLUSION_APART_FROM_PAUSED && v.overlapsAmongOthers() > 0) {
                failures.add(o.scenario() + ": " + v.overlapsAmongOthers() + " overlapping critical sections not involving a stalled holder (paused, or told its lease ran out)");
            }
            if (o.fenced() && v.staleAccepted() > 0) {
                failures.add(o.scenario() + ": " + v.staleAccepted() + " stale writes accepted");
            }
            if (v.duplicateTokens() > 0) {
                failures.add(o.scenario() + ": " + v.duplicateTokens() + " duplicate fencing tokens");
            }
            if (o.lossSignalled() < o.lossExpected()) {
                failures.add(o.scenario() + ": loss signalled " + o.lossSignalled() + " of " + o.lossExpected() + " times");
            }
            if (!o.leftovers().startsWith("none")) {
                failures.add(o.scenario() + ": left behind " + o.leftovers());
            }
            if (v.sections() == 0) {
                failures.add(o.scenario() + ": no critical section completed");
            }
        }
        return failures;
    }

    public static String report(List<Outcome> outcomes, int repetitions) {
        StringBuilder md = new StringBuilder("# Reliability under faults\n\n");
        md.append("Generated by `ChaosRun` on ").append(LocalDate.now()).append(" (JVM ").append(System.getProperty("java.version"))
                .append("): ").append(WORKERS).append(" worker JVMs x ").append(THREADS)
                .append(" threads contend for one key through `RedisLockTemplate` (watchdog lease ").append(LEASE_MILLIS)
                .append(" ms) via a TCP proxy to one Redis. Each critical section reads a counter from a separate resource process, ")
                .append("sleeps 5-30 ms and writes it back plus one, passing its fencing token; the resource timestamps every call ")
                .append("on one clock and, fenced, refuses a token lower than the highest it has seen. Each fault was injected ")
                .append(repetitions).append(" times (the no-fault run is one stretch). Every pause catches a holder inside its ")
                .append("critical section (the resource holds back the reply to a worker's read until that worker is stopped); recovery runs ")
                .append("from the end of a fault to the next accepted write.\n\n");
        md.append("| scenario | promise | critical sections | overlaps | overlaps not involving a stalled holder "
                + "| paused holders that wrote after the pause | lost updates | stale writes accepted | stale writes rejected "
                + "| duplicate / decreasing tokens | abandoned (isHeld false) | loss signalled | recovery p50 / p99 ms | left behind |\n");
        md.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- | --- |\n");
        for (Outcome o : outcomes) {
            HistoryChecker.Verdict v = o.verdict();
            boolean paused = o.promise() == Promise.EXCLUSION_APART_FROM_PAUSED;
            md.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %s | %s | %d | %d | %d | %d / %d | %d | %s | %s | %s |%n",
                    o.scenario(), o.promise().text, v.sections(), v.overlaps(),
                    paused ? String.valueOf(v.overlapsAmongOthers()) : "–",
                    paused ? v.pausedWrites() + " of " + o.lossExpected() : "–",
                    v.lostUpdates(), v.staleAccepted(), v.staleRejected(), v.duplicateTokens(), v.decreasingTokens(), v.abandoned(),
                    o.lossExpected() == 0 ? "–" : o.lossSignalled() + " of " + o.lossExpected(), percentiles(v.recoveryMillis()),
                    o.leftovers()));
        }
        List<String> failures = failures(outcomes);
        md.append("\n## Verdict\n\n");
        if (failures.isEmpty()) {
            md.append("Every pass criterion held: no overlap where exclusion is promised, none between holders other than a ")
                    .append("paused one, no stale write accepted by the fenced resource, every paused holder told of its loss, ")
                    .append("nothing left behind.\n");
        } else {
            failures.forEach(f -> md.append("- **").append(f).append("**\n"));
        }
        md.append("\nA holder paused past its lease overlaps the next holder whenever it writes after the pause: always when it ")
                .append("writes blindly, and, when it checks `isHeld()` first, only if the pause fell between that check and its ")
                .append("write (the column \"paused holders that wrote after the pause\" counts those). No check can close that ")
                .append("window; fencing does, and the fenced resource refused every such write. The unfenced row shows the ")
                .append("same pause without fencing: the resource accepts the stale writes and the updates in between are lost. ")
                .append("A Redis restart that loses the ")
                .append("lock can also let two holders overlap. Where exclusion is not promised, the overlaps above are what ")
                .append("happened.\n");
        return md.toString();
    }

    private static String percentiles(List<Long> values) {
        if (values.isEmpty()) {
            return "–";
        }
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        return sorted.get(sorted.size() / 2) + " / " + sorted.get(Math.min(sorted.size() - 1, sorted.size() * 99 / 100));
    }

}
