package io.github.redislock.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a recorded history against the mutex model. A critical section runs from a worker's read to
 * its write (or to its abandoning the write); sections that wrote must not overlap. Overlaps are also
 * counted apart from the sections of stalled holders: those the controller paused, and those told that their
 * lease ran out before they could renew it (a process starved of CPU on a loaded machine is paused just the
 * same). A stalled holder may overlap its successor (that is what fencing is for), but it must never make two
 * other holders overlap. A holder told that Redis no longer had its lock is not exempt: that is what a paused
 * holder's release deleting someone else's lock would look like.
 */
public final class HistoryChecker {

    /** What one history shows. */
    public record Verdict(int sections, int overlaps, int overlapsAmongOthers, int pausedWrites, int lostUpdates, int staleAccepted, int staleRejected,
            int duplicateTokens, int decreasingTokens, int abandoned, Set<Long> lostTokens, List<Long> recoveryMillis) {
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
        List<long[]> sections = new ArrayList<>(); // start, end, token
        List<String> sectionWorkers = new ArrayList<>();
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
                case "read" -> {
                    open.put(e.worker(), e);
                    highestSeen = Math.max(highestSeen, e.token());
                }
                case "write" -> {
                    Event read = open.remove(e.worker());
                    if (read != null) {
                        sections.add(new long[] {read.nanos(), e.nanos(), e.token()});
                        sectionWorkers.add(e.worker());
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
        int overlaps = 0;
        int overlapsAmongOthers = 0;
        for (int i = 0; i < sections.size(); i++) {
            for (int j = i + 1; j < sections.size(); j++) {
                long[] a = sections.get(i);
                long[] b = sections.get(j);
                if (a[0] < b[1] && b[0] < a[1] && !sectionWorkers.get(i).equals(sectionWorkers.get(j))) {
                    overlaps++;
                    if (!stalledTokens.contains(a[2]) && !stalledTokens.contains(b[2])) {
                        overlapsAmongOthers++;
                    }
                }
            }
        }
        int pausedWrites = (int) sections.stream().filter(s -> pausedTokens.contains(s[2])).count();
        // tokens in the order sections began: duplicates (two sections, one token) and decreases
        List<long[]> byStart = new ArrayList<>(sections);
        byStart.sort(Comparator.comparingLong(s -> s[0]));
        Set<Long> tokens = new HashSet<>();
        int duplicates = 0;
        int decreasing = 0;
        long previous = 0;
        for (long[] s : byStart) {
            if (!tokens.add(s[2])) {
                duplicates++;
            }
            if (s[2] < previous) {
                decreasing++;
            }
            previous = Math.max(previous, s[2]);
        }
        List<Long> recoveries = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            Event e = events.get(i);
            if (e.type().equals("mark") && e.worker().endsWith("-end")) {
                for (int j = i + 1; j < events.size(); j++) {
                    if (events.get(j).type().equals("write") && events.get(j).accepted()) {
                        recoveries.add((events.get(j).nanos() - e.nanos()) / 1_000_000);
                        break;
                    }
                }
            }
        }
        int lostUpdates = (int) Math.max(0, acceptedWrites - finalValue);
        return new Verdict(sections.size(), overlaps, overlapsAmongOthers, pausedWrites, lostUpdates, staleAccepted,
                staleRejected, duplicates, decreasing, abandoned, lostTokens, recoveries);
    }
}
