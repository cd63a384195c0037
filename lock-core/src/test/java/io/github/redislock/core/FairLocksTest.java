package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How a hand-over message is read: pure logic, the message format of {@code fair_release.lua}. */
class FairLocksTest {

    private static final String H = FairLockScripts.HANDED_OVER;

    private final FairLocks fairLocks = new FairLocks();
    private final LocalLock waiter = new LocalLock("k");

    FairLocksTest() {
        fairLocks.waiting.put("client:1:7", waiter);
    }

    @Test
    void aHandOverMessageGivesTheWaiterItsTokenAndTheServerTimeOfTheGrant() {
        long woken = waiter.wakeups();
        assertThat(fairLocks.wake(H + "client:1:7" + H + "1795712602128351" + H + "1795712602128340")).isTrue();
        assertThat(waiter.grant).isEqualTo(new Grant(1795712602128351L, 1795712602128340L));
        assertThat(waiter.wakeups()).isGreaterThan(woken);
    }

    @Test
    void anOlderReleaseScriptsMessageWithoutTheGrantTimeReadsAsTimeZeroSoTheWaiterAsksRedis() {
        fairLocks.wake(H + "client:1:7" + H + "1795712602128351");
        assertThat(waiter.grant).isEqualTo(new Grant(1795712602128351L, 0));
    }

    @Test
    void aMessageForAnotherWaiterOrUnreadableOnlyWakes() {
        long woken = waiter.wakeups();
        fairLocks.wake(H + "client:1:8" + H + "1" + H + "2");
        assertThat(waiter.wakeups()).isEqualTo(woken);
        fairLocks.wake(H + "client:1:7" + H + "x");
        assertThat(waiter.grant).isNull();
        assertThat(waiter.wakeups()).isGreaterThan(woken);
        assertThat(fairLocks.wake("k")).as("an exclusive lock's release notice").isFalse();
    }
}
