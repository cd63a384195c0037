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
}
