package io.github.redislock.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a recorded history against the lock's model. A critical section runs from a worker's read to
 * its write (or to its abandoning the write); sections that wrote must not overlap. Overlaps are also
 * counted apart from the sections of stalled holders: those the controller paused, and those told that their
 * lease ran out before they could renew it (a process starved of CPU on a loaded machine is paused just the
 * same). A stalled holder may overlap its successor (that is what fencing is for), but it must never make two
 * other holders overlap. A holder told that Redis no longer had its lock is not exempt: that is what a paused
 * holder's release deleting someone else's lock would look like.
 * <p>
 * Read/write histories add shared sections: a reader's, from its {@code shared-read} to its {@code shared-end}.
 * Readers may overlap each other (counted apart, as {@link Verdict#sharedOverlaps()}); a writer overlapping anyone
 * is an overlap. Tokens: an exclusive section's token must be above every token of the sections that began before
 * it (readers' included); readers of one read epoch share a token, so only a token that an exclusive section shares
 * with another section is a duplicate, and a reader's token below an earlier section's is a decrease. A stalled
 * holder's late section may carry a token below its successor's; {@link Verdict#decreasingAmongOthers()} leaves
 * those out, as the overlaps do. Readers of one epoch share a token, so a stalled reader exempts its whole epoch.
 * <p>
 * A semaphore's holders are shared sections too; {@link Verdict#mostSharedAtOnce()} is the most of them open at one
 * moment, which must not exceed its permits.
 * <p>
 * Pauses between sections: the idle gaps (no completed section open) measure how long the lock sat unused; the
 * longest gap that ends after a fault began (its {@code -begin} mark, else its {@code -end} mark) and starts before
 * {@link #FAULT_WINDOW_MILLIS} after the fault's {@code -end} mark is that fault's cost to the survivors
 * ({@link Verdict#faultGapMillis()}, by the end mark's name).
 */
public final class HistoryChecker {

    /** How long after a fault's end mark an idle gap still counts towards that fault. */
    static final long FAULT_WINDOW_MILLIS = 2500;

    /** What one history shows. */
    public record Verdict(int sections, int overlaps, int overlapsAmongOthers, int pausedWrites, int lostUpdates, int staleAccepted, int staleRejected,
            int duplicateTokens, int decreasingTokens, int abandoned, Set<Long> lostTokens, List<Long> recoveryMillis,
            int sharedSections, int sharedOverlaps, int decreasingAmongOthers, Map<String, Long> faultGapMillis, List<Long> idleGapMillis,
            int mostSharedAtOnce) {
    }

    /** One completed critical section on the resource's clock; {@code shared} for a reader's. */
    private record Section(long start, long end, long token, String worker, boolean shared) {
    }

    private HistoryChecker() {
    }

    public static Verdict check(List<Event> history, long finalValue) {
        return check(history, finalValue, Set.of());
    }

    /**
     * @param pausedTokens fencing tokens of the holders the controller paused; overlaps involving their
     *        sections, or those of holders told their lease ran out, are left out of {@link Verdict#overlapsAmongOthers()}
     */
    public static Verdict check(List<Event> history, long finalValue, Set<Long> pausedTokens) {
        List<Event> events = new ArrayList<>(history);
        events.sort(Comparator.comparingLong(Event::nanos));
        Map<String, Event> open = new HashMap<>();
        List<Section> sections = new ArrayList<>();
        int abandoned = 0;
        int staleAccepted = 0;
        int staleRejected = 0;
        int acceptedWrites = 0;
        long highestSeen = 0;
        Set<Long> lostTokens = new HashSet<>();
        // holders told their lease ran out before they could renew it: stalled, as a paused holder is
        Set<Long> stalledTokens = new HashSet<>(pausedTokens);
        for (Event e : events) {
            switch (e.type()) {
                case "read", "shared-read" -> {
                    open.put(e.worker(), e);
                    highestSeen = Math.max(highestSeen, e.token());
                }
                case "write" -> {
                    Event read = open.remove(e.worker());
                    if (read != null) {
                        sections.add(new Section(read.nanos(), e.nanos(), e.token(), e.worker(), false));
                    }
                    boolean stale = e.token() < highestSeen;
                    if (e.accepted()) {
                        acceptedWrites++;
                        staleAccepted += stale ? 1 : 0;
                    } else {
                        staleRejected++;
                    }
                    highestSeen = Math.max(highestSeen, e.token());
                }
                case "shared-end" -> {
                    Event read = open.remove(e.worker());
                    if (read != null) {
                        sections.add(new Section(read.nanos(), e.nanos(), read.token(), e.worker(), true));
                    }
                }
                case "abandon" -> {
                    open.remove(e.worker());
                    abandoned++;
                }
                case "lost" -> lostTokens.add(e.token());
                case "lost-stalled" -> {
                    lostTokens.add(e.token());
                    stalledTokens.add(e.token());
                }
                default -> {
                    // marks
                }
            }
        }
        sections.sort(Comparator.comparingLong(Section::start));
        int overlaps = 0;
        int overlapsAmongOthers = 0;
        int sharedOverlaps = 0;
        for (int i = 0; i < sections.size(); i++) {
            Section a = sections.get(i);
            for (int j = i + 1; j < sections.size() && sections.get(j).start() < a.end(); j++) {
                Section b = sections.get(j);
                if (a.worker().equals(b.worker())) {
                    continue;
                }
                if (a.shared() && b.shared()) {
                    sharedOverlaps++;
                    continue;
                }
                overlaps++;
                if (!stalledTokens.contains(a.token()) && !stalledTokens.contains(b.token())) {
                    overlapsAmongOthers++;
                }
            }
        }
        int pausedWrites = (int) sections.stream().filter(s -> !s.shared() && pausedTokens.contains(s.token())).count();
        // tokens in the order sections began: duplicates (a token an exclusive section shares) and decreases
        Map<Long, Boolean> tokenOnlyShared = new HashMap<>();
        int duplicates = 0;
        int decreasing = 0;
        int decreasingAmongOthers = 0;
        long previous = 0;
        for (Section s : sections) {
            Boolean onlyShared = tokenOnlyShared.get(s.token());
            if (onlyShared != null && !(onlyShared && s.shared())) {
                duplicates++;
            }
            tokenOnlyShared.put(s.token(), (onlyShared == null || onlyShared) && s.shared());
            if (s.token() < previous) {
                decreasing++;
                if (!stalledTokens.contains(s.token())) {
                    decreasingAmongOthers++;
                }
            }
            previous = Math.max(previous, s.token());
        }
        List<Long> recoveries = new ArrayList<>();
        Map<String, long[]> faults = new java.util.LinkedHashMap<>(); // end mark -> its fault's begin, end
        long begin = -1;
        for (int i = 0; i < events.size(); i++) {
            Event e = events.get(i);
            if (e.type().equals("mark") && e.worker().endsWith("-begin")) {
                begin = e.nanos();
            }
            if (e.type().equals("mark") && e.worker().endsWith("-end")) {
                faults.put(e.worker(), new long[] {begin < 0 ? e.nanos() : begin, e.nanos()});
                begin = -1;
                for (int j = i + 1; j < events.size(); j++) {
                    if (events.get(j).type().equals("write") && events.get(j).accepted()) {
                        recoveries.add((events.get(j).nanos() - e.nanos()) / 1_000_000);
                        break;
                    }
                }
            }
        }
        List<long[]> gaps = idleGaps(sections);
        List<Long> idleGapMillis = gaps.stream().map(g -> (g[1] - g[0]) / 1_000_000).toList();
        Map<String, Long> faultGaps = new java.util.LinkedHashMap<>();
        long window = FAULT_WINDOW_MILLIS * 1_000_000;
        faults.forEach((mark, fault) -> gaps.stream().filter(g -> g[1] > fault[0] && g[0] < fault[1] + window)
                .mapToLong(g -> (g[1] - g[0]) / 1_000_000).max().ifPresent(gap -> faultGaps.put(mark, gap)));
        int lostUpdates = (int) Math.max(0, acceptedWrites - finalValue);
        int sharedSections = (int) sections.stream().filter(Section::shared).count();
        return new Verdict(sections.size(), overlaps, overlapsAmongOthers, pausedWrites, lostUpdates, staleAccepted,
                staleRejected, duplicates, decreasing, abandoned, lostTokens, recoveries, sharedSections, sharedOverlaps,
                decreasingAmongOthers, faultGaps, idleGapMillis, mostAtOnce(sections.stream().filter(Section::shared).toList()));
    }

    /** The most of these sections open at one moment (a section ending when another begins does not count with it). */
    private static int mostAtOnce(List<Section> sections) {
        List<long[]> edges = new ArrayList<>(); // time, +1 for a start, -1 for an end
        for (Section s : sections) {
            edges.add(new long[] {s.start(), 1});
            edges.add(new long[] {s.end(), -1});
        }
        edges.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
        int open = 0;
        int most = 0;
        for (long[] edge : edges) {
            open += (int) edge[1];
            most = Math.max(most, open);
        }
        return most;
    }

    /** The stretches in which no completed section was open, between the first section's start and the last's end. */
    private static List<long[]> idleGaps(List<Section> byStart) {
        List<long[]> gaps = new ArrayList<>();
        long busyUntil = Long.MIN_VALUE;
        for (Section s : byStart) {
            if (busyUntil != Long.MIN_VALUE && s.start() > busyUntil) {
                gaps.add(new long[] {busyUntil, s.start()});
            }
            busyUntil = Math.max(busyUntil, s.end());
        }
        return gaps;
    }
}
