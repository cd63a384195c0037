package io.github.redislock.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RedlockSnapshotRestart} inside {@code ./mvnw verify}, as the full run has it: 10,000 locks held on a bare
 * majority of 3 Redlock masters while one restarts from an RDB snapshot that lacks half of them. (Put back one lock per
 * script call, the renewals lost about 6,000 of them within the 3 s lease, and the master never had them all back.) And
 * its frozen variant: 10,000 locks on 5 masters, the one restarted from the snapshot frozen as soon as the watchdog's
 * put-back has begun, then stuttering for a lease, on Jedis and on Lettuce. (A watchdog that gave up on a master after one failed put-back call
 * fails it: tried, 5,133 of the 10,000 locks stayed off that master.)
 */
class RedlockSnapshotRestartTest {

    @Test
    void aMasterRestartedFromASnapshotGrantsNoHeldKeyAndGetsEveryLockBack() throws Exception {
        int locks = Integer.getInteger("chaos.short-redlock-snapshot-locks", 10_000);
        RedlockSnapshotRestart.Outcome outcome = RedlockSnapshotRestart.run(locks, RedlockSnapshotRestart.leaseFor(locks), false);
        System.out.println(RedlockSnapshotRestart.report(List.of(outcome)));
        assertThat(outcome.inSnapshot()).as("locks in the snapshot").isPositive().isLessThan(outcome.locks());
        assertThat(outcome.contenderTries()).as("the second client's tries").isPositive();
        assertThat(outcome.failures()).isEmpty();
    }

    @ParameterizedTest(name = "lettuce: {0}")
    @ValueSource(booleans = {false, true})
    void aMasterFrozenWhileItsForgottenLocksArePutBackGrantsNoHeldKeyAndGetsThemAllOnceItAnswers(boolean lettuce)
            throws Exception {
        int locks = Integer.getInteger("chaos.short-redlock-snapshot-locks", 10_000);
        RedlockSnapshotRestart.Outcome outcome = RedlockSnapshotRestart.run(locks, RedlockSnapshotRestart.leaseFor(locks), true,
                lettuce);
        System.out.println(RedlockSnapshotRestart.report(List.of(outcome)));
        assertThat(outcome.freeze().backWhenFrozen()).as("forgotten locks back when the master froze").isPositive()
                .isLessThan(outcome.locks() - outcome.inSnapshot());
        assertThat(outcome.contenderTries()).as("the second client's tries").isPositive();
        assertThat(outcome.failures()).isEmpty();
    }
}
