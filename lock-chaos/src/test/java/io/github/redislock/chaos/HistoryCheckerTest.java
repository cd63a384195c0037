package io.github.redislock.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The checker on hand-written histories: it sees what it must see. */
class HistoryCheckerTest {

    @Test
    void sequentialSectionsAreClean() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                new Event(10, "read", "a-0", 1, 0, true), new Event(20, "write", "a-0", 1, 1, true),
                new Event(30, "read", "b-0", 2, 1, true), new Event(40, "write", "b-0", 2, 2, true)), 2);
        assertThat(v.sections()).isEqualTo(2);
        assertThat(v.overlaps()).isZero();
        assertThat(v.lostUpdates()).isZero();
        assertThat(v.staleAccepted()).isZero();
    }

    @Test
    void theMostSemaphoreHoldersAtOnceAreCountedAndSectionsThatOnlyTouchAreNot() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                new Event(10, "shared-read", "a-0", 1, 0, true), new Event(12, "shared-read", "b-0", 2, 0, true),
                new Event(20, "shared-end", "a-0", 1, 0, true), new Event(20, "shared-read", "c-0", 3, 0, true),
                new Event(25, "shared-end", "b-0", 2, 0, true), new Event(30, "shared-end", "c-0", 3, 0, true)), 0);
        assertThat(v.mostSharedAtOnce()).isEqualTo(2); // c began as a ended
        HistoryChecker.Verdict three = HistoryChecker.check(List.of(
                new Event(10, "shared-read", "a-0", 1, 0, true), new Event(12, "shared-read", "b-0", 2, 0, true),
                new Event(19, "shared-read", "c-0", 3, 0, true), new Event(20, "shared-end", "a-0", 1, 0, true),
                new Event(25, "shared-end", "b-0", 2, 0, true), new Event(30, "shared-end", "c-0", 3, 0, true)), 0);
        assertThat(three.mostSharedAtOnce()).isEqualTo(3);
        assertThat(three.overlaps()).isZero();
    }

    @Test
    void overlappingSectionsLoseAnUpdateAndAcceptAStaleWrite() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                new Event(10, "read", "a-0", 1, 0, true), new Event(15, "read", "b-0", 2, 0, true),
                new Event(20, "write", "b-0", 2, 1, true), new Event(25, "write", "a-0", 1, 1, true)), 1);
        assertThat(v.overlaps()).isEqualTo(1);
        assertThat(v.lostUpdates()).isEqualTo(1);
        assertThat(v.staleAccepted()).isEqualTo(1);
    }

    @Test
    void aRefusedStaleWriteIsCountedAsRejectedAndTokensAreChecked() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                new Event(10, "read", "a-0", 5, 0, true), new Event(15, "read", "b-0", 5, 0, true),
                new Event(20, "write", "b-0", 5, 1, true), new Event(25, "write", "a-0", 5, 1, false),
                new Event(26, "lost", "a-0", 5, 0, true), new Event(30, "mark", "x-end", 0, 0, true),
                new Event(35, "read", "c-0", 4, 1, true), new Event(40_000_040, "write", "c-0", 4, 2, false)), 1);
        assertThat(v.staleRejected()).isEqualTo(2);
        assertThat(v.duplicateTokens()).isEqualTo(1);
        assertThat(v.decreasingTokens()).isEqualTo(1);
        assertThat(v.lostTokens()).containsExactly(5L);
        assertThat(v.recoveryMillis()).isEmpty(); // no accepted write after the mark
    }

    @Test
    void overlapsWithAPausedHolderAreToldApartFromOverlapsBetweenOthers() {
        List<Event> history = List.of(
                new Event(10, "read", "a-0", 1, 0, true),                                          // paused holder
                new Event(20, "read", "b-0", 2, 0, true), new Event(30, "write", "b-0", 2, 1, true),
                new Event(40, "read", "c-0", 3, 1, true), new Event(45, "read", "d-0", 4, 1, true), // c and d overlap
                new Event(50, "write", "c-0", 3, 2, true), new Event(55, "write", "d-0", 4, 2, true),
                new Event(60, "write", "a-0", 1, 0, false));
        HistoryChecker.Verdict v = HistoryChecker.check(history, 2, Set.of(1L));
        assertThat(v.overlaps()).isEqualTo(4); // a overlaps b, c and d; c overlaps d
        assertThat(v.overlapsAmongOthers()).isEqualTo(1);
        assertThat(v.pausedWrites()).isEqualTo(1);
        assertThat(HistoryChecker.check(history, 2).overlapsAmongOthers()).isEqualTo(4);
    }

    @Test
    void aHolderToldItsLeaseRanOutCountsAsStalledButOneToldItsLockWasGoneDoesNot() {
        // b was starved past its lease (told "ran out") and overlaps c: like a paused holder, not a broken lock
        List<Event> starved = List.of(
                new Event(10, "read", "b-0", 2, 0, true), new Event(20, "read", "c-0", 3, 0, true),
                new Event(25, "lost-stalled", "b-watchdog", 2, 0, true),
                new Event(30, "write", "c-0", 3, 1, true), new Event(40, "write", "b-0", 2, 1, true));
        HistoryChecker.Verdict stalled = HistoryChecker.check(starved, 1, Set.of());
        assertThat(stalled.overlaps()).isEqualTo(1);
        assertThat(stalled.overlapsAmongOthers()).isZero();
        assertThat(stalled.lostTokens()).containsExactly(2L);
        // the same overlap where b was told Redis no longer had its lock (someone deleted it): still counted
        List<Event> deleted = List.of(
                new Event(10, "read", "b-0", 2, 0, true), new Event(20, "read", "c-0", 3, 0, true),
                new Event(25, "lost", "b-watchdog", 2, 0, true),
                new Event(30, "write", "c-0", 3, 1, true), new Event(40, "write", "b-0", 2, 1, true));
        assertThat(HistoryChecker.check(deleted, 1, Set.of()).overlapsAmongOthers()).isEqualTo(1);
    }

    // read/write histories ------------------------------------------------------------------------

    private static Event sharedRead(long nanos, String worker, long token) {
        return new Event(nanos, "shared-read", worker, token, 0, true);
    }

    private static Event sharedEnd(long nanos, String worker, long token) {
        return new Event(nanos, "shared-end", worker, token, 0, true);
    }

    @Test
    void readersOverlappingEachOtherAndWritersBetweenThemAreClean() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                sharedRead(10, "a-0", 3), sharedRead(12, "b-0", 3), sharedRead(14, "c-0", 3),   // one read epoch
                sharedEnd(20, "a-0", 3), sharedEnd(22, "b-0", 3), sharedEnd(24, "c-0", 3),
                new Event(30, "read", "d-0", 4, 0, true), new Event(40, "write", "d-0", 4, 1, true),
                sharedRead(50, "a-0", 5), sharedEnd(60, "a-0", 5)), 1);
        assertThat(v.sections()).isEqualTo(5);
        assertThat(v.sharedSections()).isEqualTo(4);
        assertThat(v.sharedOverlaps()).isEqualTo(3);
        assertThat(v.overlaps()).isZero();
        assertThat(v.duplicateTokens()).isZero();
        assertThat(v.decreasingTokens()).isZero();
        assertThat(v.decreasingAmongOthers()).isZero();
        assertThat(v.staleAccepted()).isZero();
        assertThat(v.lostUpdates()).isZero();
    }

    @Test
    void aWriterOverlappingAReaderIsAnOverlap() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                sharedRead(10, "a-0", 3), new Event(15, "read", "b-0", 4, 0, true),
                new Event(20, "write", "b-0", 4, 1, true), sharedEnd(25, "a-0", 3)), 1);
        assertThat(v.overlaps()).isEqualTo(1);
        assertThat(v.overlapsAmongOthers()).isEqualTo(1);
        assertThat(v.sharedOverlaps()).isZero();
    }

    @Test
    void twoWritersOverlappingAmongReadersAreAnOverlap() {
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                sharedRead(5, "r-0", 2), sharedEnd(8, "r-0", 2),
                new Event(10, "read", "a-0", 3, 0, true), new Event(15, "read", "b-0", 4, 0, true),
                new Event(20, "write", "b-0", 4, 1, true), new Event(25, "write", "a-0", 3, 1, true)), 1);
        assertThat(v.overlaps()).isEqualTo(1);
        assertThat(v.overlapsAmongOthers()).isEqualTo(1);
        assertThat(v.lostUpdates()).isEqualTo(1);
    }

    @Test
    void aWriteWhoseTokenIsNotAboveAnEarlierReadsGoesBackwards() {
        // the write after the read epoch 7 carries 6: tokens went backwards
        HistoryChecker.Verdict below = HistoryChecker.check(List.of(
                sharedRead(10, "a-0", 7), sharedEnd(20, "a-0", 7),
                new Event(30, "read", "b-0", 6, 0, true), new Event(40, "write", "b-0", 6, 1, true)), 1);
        assertThat(below.decreasingTokens()).isEqualTo(1);
        assertThat(below.decreasingAmongOthers()).isEqualTo(1);
        // the write carries the read epoch's own token: a writer must be above it, not equal
        HistoryChecker.Verdict equal = HistoryChecker.check(List.of(
                sharedRead(10, "a-0", 7), sharedEnd(20, "a-0", 7),
                new Event(30, "read", "b-0", 7, 0, true), new Event(40, "write", "b-0", 7, 1, true)), 1);
        assertThat(equal.duplicateTokens()).isEqualTo(1);
        // a reader after a write carrying the write's token, or one below it
        HistoryChecker.Verdict readerEqual = HistoryChecker.check(List.of(
                new Event(10, "read", "b-0", 7, 0, true), new Event(20, "write", "b-0", 7, 1, true),
                sharedRead(30, "a-0", 7), sharedEnd(40, "a-0", 7)), 1);
        assertThat(readerEqual.duplicateTokens()).isEqualTo(1);
        HistoryChecker.Verdict readerBelow = HistoryChecker.check(List.of(
                new Event(10, "read", "b-0", 7, 0, true), new Event(20, "write", "b-0", 7, 1, true),
                sharedRead(30, "a-0", 5), sharedEnd(40, "a-0", 5)), 1);
        assertThat(readerBelow.decreasingAmongOthers()).isEqualTo(1);
    }

    @Test
    void aHolderStalledPastItsLeaseMayComeLateWithALowerTokenButNobodyElse() {
        List<Event> history = List.of(
                new Event(10, "read", "b-0", 8, 0, true), new Event(20, "write", "b-0", 8, 1, true),
                new Event(25, "lost-stalled", "a-watchdog", 7, 0, true),
                new Event(30, "read", "a-0", 7, 1, true), new Event(40, "write", "a-0", 7, 2, false));
        HistoryChecker.Verdict v = HistoryChecker.check(history, 1);
        assertThat(v.decreasingTokens()).isEqualTo(1);
        assertThat(v.decreasingAmongOthers()).isZero();
        assertThat(v.staleRejected()).isEqualTo(1);
        List<Event> notStalled = history.stream().filter(e -> !e.type().equals("lost-stalled")).toList();
        assertThat(HistoryChecker.check(notStalled, 1).decreasingAmongOthers()).isEqualTo(1);
    }

    @Test
    void theLongestPauseAroundEachFaultIsMeasuredOnTheResourcesClock() {
        long ms = 1_000_000;
        HistoryChecker.Verdict v = HistoryChecker.check(List.of(
                new Event(0, "read", "a-0", 1, 0, true), new Event(10 * ms, "write", "a-0", 1, 1, true),
                sharedRead(12 * ms, "b-0", 2), sharedRead(14 * ms, "c-0", 2), sharedEnd(20 * ms, "b-0", 2),
                sharedEnd(30 * ms, "c-0", 2),                                  // busy until 30 ms
                new Event(100 * ms, "mark", "kill-waiter-0-end", 0, 0, true),
                new Event(730 * ms, "read", "d-0", 3, 1, true), new Event(740 * ms, "write", "d-0", 3, 2, true),
                new Event(745 * ms, "read", "a-0", 4, 2, true), new Event(750 * ms, "write", "a-0", 4, 3, true)), 3);
        assertThat(v.idleGapMillis()).containsExactly(2L, 700L, 5L);
        assertThat(v.faultGapMillis()).containsExactly(java.util.Map.entry("kill-waiter-0-end", 700L));
    }

    @Test
    void aPauseThatEndedBeforeTheFaultsEndMarkCountsFromItsBeginMark() {
        // the kill took long (a loaded machine): the next holder started before the end mark was recorded
        long ms = 1_000_000;
        List<Event> history = List.of(
                new Event(0, "read", "a-0", 1, 0, true), new Event(10 * ms, "write", "a-0", 1, 1, true),
                new Event(15 * ms, "read", "b-0", 2, 1, true),                 // b is killed inside its section
                new Event(20 * ms, "mark", "kill-0-begin", 0, 0, true),
                new Event(1010 * ms, "read", "c-0", 3, 1, true), new Event(1020 * ms, "write", "c-0", 3, 2, true),
                new Event(1200 * ms, "mark", "kill-0-end", 0, 0, true),
                new Event(1250 * ms, "read", "a-0", 4, 2, true), new Event(1260 * ms, "write", "a-0", 4, 3, true));
        assertThat(HistoryChecker.check(history, 3).faultGapMillis()).containsExactly(java.util.Map.entry("kill-0-end", 1000L));
        List<Event> withoutBegin = history.stream().filter(e -> !e.worker().endsWith("-begin")).toList();
        assertThat(HistoryChecker.check(withoutBegin, 3).faultGapMillis()).containsExactly(java.util.Map.entry("kill-0-end", 230L));
    }
}
