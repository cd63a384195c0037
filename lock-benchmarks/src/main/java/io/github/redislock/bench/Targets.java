package io.github.redislock.bench;

import java.util.Locale;

/** The targets, checked against the medians of one run. */
final class Targets {

    private Targets() {
    }

    static String evaluate(LockBenchmark.Results r) {
        String ours = LockBenchmark.OURS;
        StringBuilder sb = new StringBuilder("| target | measured | met |\n| --- | --- | --- |\n");
        for (String driver : new String[] {LockBenchmark.OURS, LockBenchmark.OURS_LETTUCE}) {
            String on = driver.equals(LockBenchmark.OURS) ? " (Jedis)" : " (Lettuce)";
            Double p50 = r.median("S1 p50 µs", driver);
            Double floor = r.median("S1 floor p50 µs (2 EVALSHA)", driver);
            row(sb, "S1 p50 within 1.15× the two-EVALSHA floor" + on, p50, floor,
                    p50 != null && floor != null ? p50 / floor : null, "%.2f× the floor", v -> v <= 1.15);
        }
        // measured in turns, so that no library is compared with another measured minutes apart
        ratioRow(sb, r, LockBenchmark.OURS, LockBenchmark.S1_IN_TURNS_ROW, "redisson",
                "S1 ops/s at least 1.3× Redisson's, every library in turns (Jedis)", 1.3);
        ratioRow(sb, r, LockBenchmark.OURS_LETTUCE, LockBenchmark.S1_IN_TURNS_ROW, "redisson",
                "S1 ops/s at least 1.3× Redisson's, every library in turns (Lettuce)", 1.3);
        ratioRow(sb, r, LockBenchmark.OURS, "S3 ops/s (16 threads, 1 JVM, one key)", "redisson",
                "S3 one JVM at least 3× Redisson's (Jedis)", 3.0);
        ratioRow(sb, r, LockBenchmark.OURS_LETTUCE, "S3 ops/s (16 threads, 1 JVM, one key)", "redisson",
                "S3 one JVM at least 3× Redisson's (Lettuce)", 3.0);
        ratioRow(sb, r, "S3 ops/s (4 JVMs x 4 threads, one key)", "redisson", "S3 four JVMs not below Redisson", 1.0);
        Double handOff50 = r.median("S4 hand-off p50 µs", ours);
        Double handOff99 = r.median("S4 hand-off p99 µs", ours);
        row(sb, "S4 hand-off p50 ≤ 0.5 ms", handOff50, null, handOff50, "%.0f µs", v -> v <= 500);
        row(sb, "S4 hand-off p99 ≤ 2 ms", handOff99, null, handOff99, "%.0f µs", v -> v <= 2000);
        Double redissonHandOff = r.median("S4 hand-off p50 µs", "redisson");
        row(sb, "S4 no slower than Redisson (p50)", handOff50, redissonHandOff,
                handOff50 != null && redissonHandOff != null ? handOff50 / redissonHandOff : null, "%.2f× Redisson's", v -> v <= 1.0);
        Double fairHandOff50 = r.median("S4 fair hand-off p50 µs", ours);
        row(sb, "S4 fair hand-off p50 ≤ 0.3 ms", fairHandOff50, null, fairHandOff50, "%.0f µs", v -> v <= 300);
        Double fairFloor50 = r.median(LockBenchmark.S4_FAIR_FLOOR_ROW, ours);
        // not a target: what the machine allowed at the time, so a miss of the absolute figure can be told apart
        context(sb, "S4 fair hand-off p50 against its pub/sub floor measured in turns with it", fairHandOff50, fairFloor50,
                "%1$.2f× the floor (%3$.0f µs)");
        Double nested = r.median("S5 Redis commands per nested acquire", ours);
        row(sb, "S5 0 Redis commands per nested acquire", nested, null, nested, "%.2f", v -> v == 0);
        Double perLock = r.median("S6 heap bytes per held lock (100,000 held)", ours);
        row(sb, "S6 ≤ 1 KB of heap per held lock", perLock, null, perLock, "%.0f bytes", v -> v <= 1024);
        Double retained = r.median("S6 KB of the library's own objects retained after release", ours);
        row(sb, "S6 nothing retained after release", retained, null, retained, "%.1f KB", v -> v <= 1);
        ratioRow(sb, r, "S7 fair ops/s (4 JVMs x 4 threads, one key)", "redisson", "S7 fair hot key at least 5× Redisson's fair lock", 5.0);
        // not a target: the most any lock could reach in S7 against Redisson's fair lock: S3's floor runs the same JVMs,
        // threads and critical sections (a GET and a SET) with no lock, each hand-over one PUBLISH to another JVM
        context(sb, "S7's ceiling against Redisson's fair lock: S3's floor (no lock) against Redisson's S7 (Jedis)",
                r.median(LockBenchmark.S3_FLOOR_ROW, ours), r.median("S7 fair ops/s (4 JVMs x 4 threads, one key)", "redisson"),
                "%1$.2f× (%2$,.0f against %3$,.0f ops/s)");
        ratioRow(sb, r, "S8 ops/s (16 threads, 90 % reads, one key)", "redisson", "S8 read-mostly at least 2× Redisson's", 2.0);
        ratioRow(sb, r, "S9 ops/s (16 threads, semaphore of 4 permits)", "redisson", "S9 semaphore at least 2× Redisson's", 2.0);
        performanceAtScale(sb, r);
        return sb.toString();
    }

    /** The targets of issue 25 (performance at scale) that this benchmark measures; S10's are in benchmarks-scale.md. */
    private static void performanceAtScale(StringBuilder sb, LockBenchmark.Results r) {
        for (String driver : new String[] {LockBenchmark.OURS, LockBenchmark.OURS_LETTUCE}) {
            String on = driver.equals(LockBenchmark.OURS) ? " (Jedis)" : " (Lettuce)";
            // the peers on the same driver: a Lettuce user compares libraries on Lettuce
            String[] peers = LockBenchmark.PEERS.stream().map(peer -> LockBenchmark.peer(peer, driver)).toArray(String[]::new);
            bestPeerRow(sb, r, driver, "S1 calling thread's CPU µs per lock+unlock", peers, false,
                    "S1 calling thread's CPU per lock+unlock at or below the leanest peer's" + on);
            Double callingCpu = r.median("S1 calling thread's CPU µs per lock+unlock", driver);
            Double callingFloor = r.median("S1 floor calling thread's CPU µs (2 EVALSHA)", driver);
            // not a target: what the driver itself costs the calling thread for the two round trips of a lock+unlock
            context(sb, "S1 calling thread's CPU against two plain EVALSHA calls through Spring Data Redis" + on, callingCpu,
                    callingFloor, "%1$.2f× the floor (%3$.1f µs)");
            kernelShare(sb, r, driver, peers, on);
            bestPeerRow(sb, r, driver, "S1 calling thread's heap bytes allocated per lock+unlock", peers, false,
                    "S1 calling thread's heap per lock+unlock at or below the leanest peer's" + on);
            bestPeerRow(sb, r, driver, "S1 CPU µs of every thread of the JVM per lock+unlock", peers, false,
                    "(whole JVM) S1 CPU per lock+unlock, every thread, at or below the leanest peer's" + on);
            bestPeerRow(sb, r, driver, "S1 heap bytes allocated by every thread of the JVM per lock+unlock", peers, false,
                    "(whole JVM) S1 heap per lock+unlock, every thread, at or below the leanest peer's" + on);
            // measured in turns, so that no library is compared with another measured minutes apart
            bestPeerRow(sb, r, driver, LockBenchmark.S1_IN_TURNS_ROW, peers, true,
                    "S1 ops/s ahead of every peer, every library in turns" + on);
        }
        Double handOff = r.median("S4 hand-off p50 µs", LockBenchmark.OURS);
        row(sb, "S4 hand-off across clients p50 ≤ 0.3 ms (Jedis)", handOff, null, handOff, "%.0f µs", v -> v <= 300);
        // measured in turns, so that the two drivers are not compared minutes apart
        Double jedisInTurns = r.median(LockBenchmark.S4_DRIVERS_IN_TURNS_ROW, LockBenchmark.OURS);
        Double lettuceInTurns = r.median(LockBenchmark.S4_DRIVERS_IN_TURNS_ROW, LockBenchmark.OURS_LETTUCE);
        row(sb, "S4 hand-off p50 on Lettuce ≤ 1.1× Jedis's, the two drivers in turns", lettuceInTurns, jedisInTurns,
                lettuceInTurns != null && jedisInTurns != null ? lettuceInTurns / jedisInTurns : null,
                "%.2f× Jedis's", v -> v <= 1.1);
        // not a target: the two drivers' pub/sub floors in the same turns: what a Lettuce hand-off can reach against Jedis's
        context(sb, "S4's pub/sub floor on Lettuce against Jedis's, the two drivers in turns",
                r.median(LockBenchmark.S4_FLOOR_DRIVERS_IN_TURNS_ROW, LockBenchmark.OURS_LETTUCE),
                r.median(LockBenchmark.S4_FLOOR_DRIVERS_IN_TURNS_ROW, LockBenchmark.OURS),
                "%1$.2f× Jedis's (%2$.0f µs against %3$.0f µs)");
        Double lettuceHandOff = r.median("S4 hand-off p50 µs", LockBenchmark.OURS_LETTUCE);
        Double floor = r.median(LockBenchmark.S4_FLOOR_ROW, LockBenchmark.OURS);
        Double lettuceFloorInTurns = r.median(LockBenchmark.S4_FLOOR_ROW, LockBenchmark.OURS_LETTUCE);
        // not a target: where the hand-off's time goes: a release's grant published to the waiter's client, which wakes it
        context(sb, "S4 hand-off p50 against its pub/sub floor measured in turns with it (Jedis)", handOff, floor,
                "%1$.2f× the floor (%3$.0f µs)");
        context(sb, "S4 hand-off p50 against its pub/sub floor measured in turns with it (Lettuce)", lettuceHandOff,
                lettuceFloorInTurns, "%1$.2f× the floor (%3$.0f µs)");
        Double lettuceFloor = r.median(LockBenchmark.S4_FAIR_FLOOR_ROW, LockBenchmark.OURS_LETTUCE);
        Double jedisFloor = r.median(LockBenchmark.S4_FAIR_FLOOR_ROW, LockBenchmark.OURS);
        // not a target: a release notice's own trip (PUBLISH, the subscriber wakes a thread) on each driver, no lock
        context(sb, "S4's pub/sub floor (PUBLISH; the subscriber wakes the waiter), Lettuce against Jedis", lettuceFloor,
                jedisFloor, "%1$.2f× Jedis's (%2$.0f µs against %3$.0f µs)");
        for (String metric : new String[] {"S3 ops/s (4 JVMs x 4 threads, one key)", "S7 fair ops/s (4 JVMs x 4 threads, one key)"}) {
            Double lettuce = r.median(metric, LockBenchmark.OURS_LETTUCE);
            Double jedis = r.median(metric, LockBenchmark.OURS);
            row(sb, metric.substring(0, 2) + " across JVMs on Lettuce ≥ 0.8× Jedis's", lettuce, jedis,
                    lettuce != null && jedis != null ? lettuce / jedis : null, "%.2f× Jedis's", v -> v >= 0.8);
            // not a target: with no processor idle, ops/s follows the worker JVMs' CPU per operation
            String scenario = metric.substring(0, 2);
            context(sb, scenario + " across JVMs: the worker JVMs' CPU per operation (calling threads, library's and driver's "
                    + "threads), Lettuce against Jedis", workerCpu(r, scenario, LockBenchmark.OURS_LETTUCE),
                    workerCpu(r, scenario, LockBenchmark.OURS), "%1$.2f× Jedis's (%2$.0f µs against %3$.0f µs)");
        }
        // not a target: what the drivers allow across JVMs with no lock (a token relayed by PUBLISH), and how near S3 is
        Double lettuceRelay = r.median(LockBenchmark.S3_FLOOR_ROW, LockBenchmark.OURS_LETTUCE);
        Double jedisRelay = r.median(LockBenchmark.S3_FLOOR_ROW, LockBenchmark.OURS);
        context(sb, "S3 across JVMs' floor (the same JVMs and threads relay a token by PUBLISH, no lock), Lettuce against Jedis",
                lettuceRelay, jedisRelay, "%1$.2f× Jedis's (%2$,.0f against %3$,.0f ops/s)");
        for (String driver : new String[] {LockBenchmark.OURS, LockBenchmark.OURS_LETTUCE}) {
            context(sb, "S3 across JVMs against its floor (" + (driver.equals(LockBenchmark.OURS) ? "Jedis" : "Lettuce") + ")",
                    r.median("S3 ops/s (4 JVMs x 4 threads, one key)", driver), r.median(LockBenchmark.S3_FLOOR_ROW, driver),
                    "%1$.2f× the floor's ops/s (%3$,.0f)");
        }
        Double lettuceFloorCpu = r.median("S1 floor CPU µs of every thread of the JVM (2 EVALSHA)", LockBenchmark.OURS_LETTUCE);
        Double jedisFloorCpu = r.median("S1 floor CPU µs of every thread of the JVM (2 EVALSHA)", LockBenchmark.OURS);
        // not a target: the drivers' own cost, which bounds the runs across JVMs where no processor is idle
        context(sb, "CPU of two plain EVALSHA calls through Spring Data Redis, every thread of the JVM, Lettuce against Jedis",
                lettuceFloorCpu, jedisFloorCpu, "%1$.2f× Jedis's (%2$.0f µs against %3$.0f µs)");
        // not a target: what a lead in S3 across JVMs costs in fairness (25 % is an even spread over the 4 JVMs)
        String share = "S3 busiest JVM's share of the operations % (4 JVMs x 4 threads, one key)";
        String acrossJvms = LockBenchmark.toAnotherJvmRow("S3");
        String handOver = LockBenchmark.handOverRow("S3");
        for (String peer : new String[] {"si-spin", "si-pubsub"}) {
            context(sb, "S3 across JVMs, the busiest JVM's share of the operations, ours against " + peer + " (Jedis)",
                    r.median(share, LockBenchmark.OURS), r.median(share, peer), "%2$.0f %% against %3$.0f %%");
            context(sb, "S3 across JVMs, hand-overs to another JVM, ours against " + peer + " (Jedis)",
                    r.median(acrossJvms, LockBenchmark.OURS), r.median(acrossJvms, peer), "%2$.1f %% against %3$.1f %%");
            context(sb, "S3 across JVMs, the hand-over's p50 (an unlock call to the next entry), ours against " + peer
                    + " (Jedis)", r.median(handOver, LockBenchmark.OURS), r.median(handOver, peer),
                    "%1$.2f× (%2$.0f µs against %3$.0f µs)");
        }
        context(sb, "S3 across JVMs, the hand-over's p50 against its floor's (a token relayed by PUBLISH, Jedis)",
                r.median(handOver, LockBenchmark.OURS), r.median(LockBenchmark.handOverRow("S3 floor"), LockBenchmark.OURS),
                "%1$.2f× (%2$.0f µs against %3$.0f µs)");
        int ahead = 0;
        java.util.List<String> behind = new java.util.ArrayList<>();
        for (String metric : r.metrics()) {
            Double lettuce = r.median(metric, LockBenchmark.OURS_LETTUCE);
            Double redisson = r.median(metric, "redisson");
            if (lettuce == null || redisson == null || metric.contains("retained") || metric.contains("JIT")
                    || metric.contains("busiest JVM") || metric.contains("hand-over")) {
                // "retained" is noise around 0 for both; the JIT compilers' work tells how warm a window was; the
                // busiest JVM's share tells how evenly the lock went round, a percentage point either way around 25 %;
                // a hand-over within a JVM and one to another JVM are different work, and the rows say which it was
                continue;
            }
            if (metric.contains("ops/s") ? lettuce >= redisson : lettuce <= redisson) {
                ahead++;
            } else {
                behind.add(metric);
            }
        }
        sb.append("| every Lettuce row ahead of Redisson's | ")
                .append(ahead + behind.size() == 0 ? "not measured | – |\n"
                        : ahead + " of " + (ahead + behind.size()) + " rows" + (behind.isEmpty() ? "" : "; behind: "
                                + String.join("; ", behind)) + " | " + (behind.isEmpty() ? "yes" : "**no**") + " |\n");
    }

    /** The CPU per operation of {@code driver}'s calling threads and its library's and driver's threads in S3/S7 across JVMs. */
    private static Double workerCpu(LockBenchmark.Results r, String scenario, String driver) {
        Double calling = r.median(scenario + " CPU µs per operation of the calling threads (4 JVMs x 4 threads, one key)", driver);
        Double library = r.median(scenario + " CPU µs per operation of the library's and driver's threads (4 JVMs x 4 threads, "
                + "one key)", driver);
        return calling == null || library == null ? null : calling + library;
    }

    /** Ours against the best of {@code peers} on {@code metric}: the highest when {@code higherIsBetter}, else the lowest. */
    private static void bestPeerRow(StringBuilder sb, LockBenchmark.Results r, String driver, String metric, String[] peers,
            boolean higherIsBetter, String target) {
        Double ours = r.median(metric, driver);
        String bestPeer = bestPeer(r, metric, peers, higherIsBetter);
        Double best = bestPeer == null ? null : r.median(metric, bestPeer);
        row(sb, target, ours, best, ours != null && best != null ? ours / best : null, "%.2f× " + bestPeer,
                v -> higherIsBetter ? v >= 1.0 : v <= 1.0);
    }

    /** The peer with the highest ({@code higherIsBetter}) or lowest median of {@code metric}; {@code null}: none measured. */
    private static String bestPeer(LockBenchmark.Results r, String metric, String[] peers, boolean higherIsBetter) {
        Double best = null;
        String bestPeer = null;
        for (String peer : peers) {
            Double theirs = r.median(metric, peer);
            if (theirs != null && (best == null || (higherIsBetter ? theirs > best : theirs < best))) {
                best = theirs;
                bestPeer = peer;
            }
        }
        return bestPeer;
    }

    /**
     * Not a target: the calling thread's CPU per lock+unlock split into the kernel's (system calls) and the rest (Java
     * code), ours and the peer with the least CPU on that thread, so that a miss shows which of the two it is in.
     */
    private static void kernelShare(StringBuilder sb, LockBenchmark.Results r, String driver, String[] peers, String on) {
        String total = "S1 calling thread's CPU µs per lock+unlock";
        String kernel = "S1 calling thread's CPU in the kernel µs per lock+unlock";
        String leanest = bestPeer(r, total, peers, false);
        Double ours = r.median(total, driver);
        Double oursKernel = r.median(kernel, driver);
        Double theirs = leanest == null ? null : r.median(total, leanest);
        Double theirsKernel = leanest == null ? null : r.median(kernel, leanest);
        sb.append("| (context) S1 calling thread's CPU per lock+unlock in the kernel and outside it").append(on)
                .append(" | ");
        if (ours == null || oursKernel == null || theirs == null || theirsKernel == null) {
            sb.append("not measured | – |\n");
            return;
        }
        sb.append(String.format(Locale.ROOT, "ours %.1f µs in the kernel, %.1f µs outside; %s %.1f and %.1f µs | – |\n",
                oursKernel, ours - oursKernel, leanest, theirsKernel, theirs - theirsKernel));
    }

    private static void ratioRow(StringBuilder sb, LockBenchmark.Results r, String metric, String peer, String target,
            double atLeast) {
        ratioRow(sb, r, LockBenchmark.OURS, metric, peer, target, atLeast);
    }

    private static void ratioRow(StringBuilder sb, LockBenchmark.Results r, String driver, String metric, String peer,
            String target, double atLeast) {
        Double ours = r.median(metric, driver);
        Double theirs = r.median(metric, peer);
        row(sb, target, ours, theirs, ours != null && theirs != null ? ours / theirs : null, "%.2f× " + peer, v -> v >= atLeast);
    }

    /**
     * A row that is no target: what the machine or the driver allowed at the time, so that a miss can be told apart.
     * {@code format} gets {@code a / b}, {@code a} and {@code b}.
     */
    private static void context(StringBuilder sb, String label, Double a, Double b, String format) {
        sb.append("| (context) ").append(label).append(" | ")
                .append(a == null || b == null ? "not measured" : String.format(Locale.ROOT, format, a / b, a, b))
                .append(" | – |\n");
    }

    private static void row(StringBuilder sb, String target, Double a, Double b, Double value, String format,
            java.util.function.DoublePredicate met) {
        sb.append("| ").append(target).append(" | ");
        if (value == null) {
            sb.append("not measured | – |\n");
            return;
        }
        sb.append(String.format(Locale.ROOT, format, value)).append(" | ").append(met.test(value) ? "yes" : "**no**").append(" |\n");
    }
}
