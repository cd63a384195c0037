package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The local view of a holding (pure logic, no Redis). */
class LocalLockTest {

    private static final long TEN_SECONDS = TimeUnit.SECONDS.toNanos(10);

    @Test
    void aHoldingCountsAsExpiredOnePercentOfItsLeasePlusTwoMillisecondsBeforeRedisWouldExpireIt() {
        LocalLock lock = new LocalLock("k");
        long now = System.nanoTime();
        // Redis would keep it 50ms more: inside the 102ms margin of a 10s lease
        lock.held("owner", 1, TEN_SECONDS, now - TEN_SECONDS + TimeUnit.MILLISECONDS.toNanos(50), true);

        assertThat(lock.isValid()).isFalse();
        assertThat(lock.invalidReason()).contains("10000ms").contains("margin");

        // renewed 1s ago: valid
        lock.held("owner", 2, TEN_SECONDS, now - TEN_SECONDS + TimeUnit.MILLISECONDS.toNanos(1000), true);
        assertThat(lock.isValid()).isTrue();
        assertThat(lock.invalidReason()).isNull();
    }

    @Test
    void theMarginIsOnePercentOfTheLeasePlusTwoMillisecondsAndNeverMoreThanHalfTheLease() {
        assertThat(LocalLock.safetyMarginNanos(TimeUnit.SECONDS.toNanos(30))).isEqualTo(TimeUnit.MILLISECONDS.toNanos(302));
        assertThat(LocalLock.safetyMarginNanos(TimeUnit.MILLISECONDS.toNanos(3))).isEqualTo(TimeUnit.MICROSECONDS.toNanos(1500));
    }

    @Test
    void aRenewalAnsweredAfterTheLeaseRanOutLeavesTheHoldingInvalid() {
        LocalLock lock = new LocalLock("k");
        long now = System.nanoTime();
        // acquired 10s ago with a 10s lease: its local view ran out; a renewal sent 5s ago comes back only now
        lock.held("owner", 1, TEN_SECONDS, now - TEN_SECONDS, true);
        LocalLock.Holding holding = lock.holding;
        assertThat(lock.isValid()).isFalse();

        assertThat(lock.renewed(holding, now - TEN_SECONDS / 2)).as("recorded").isFalse();
        assertThat(lock.isValid()).as("valid again after a late renewal").isFalse();

        // one answered in time extends it
        lock.held("owner", 2, TEN_SECONDS, now - TEN_SECONDS / 2, true);
        assertThat(lock.renewed(lock.holding, now)).isTrue();
        assertThat(lock.leaseLeftNanos()).isGreaterThan(TEN_SECONDS / 2);
    }

    @Test
    void aHoldingHasOneWatchdogRenewalInFlightAtMostAndANewHoldingForgetsTheEarlierOnes() {
        LocalLock lock = new LocalLock("k");
        long now = System.nanoTime();
        lock.held("owner", 1, TEN_SECONDS, now, true);
        LocalLock.Holding first = lock.holding;
        assertThat(lock.renewalInFlight(first)).isFalse();

        assertThat(lock.renewalSent(first, now + 1)).isTrue();
        assertThat(lock.renewalSent(first, now + 2)).as("a second one while the first is in flight").isFalse();
        assertThat(lock.renewalInFlight(first, now + 1)).isTrue();
        assertThat(lock.renewalInFlight(first, now + 2)).isFalse();
        assertThat(lock.renewalEnded(first, now + 2)).as("ended by a renewal never sent").isFalse();
        assertThat(lock.renewalEnded(first, now + 1)).isTrue();
        assertThat(lock.renewalInFlight(first)).isFalse();
        assertThat(lock.renewalSent(first, now + 3)).as("the next one, once the first ended").isTrue();

        // taken again while that renewal is in flight: the new holding has none, and the old one's answer ends nothing
        lock.held("owner", 2, TEN_SECONDS, now + 4, true);
        LocalLock.Holding second = lock.holding;
        assertThat(lock.renewalInFlight(second)).isFalse();
        assertThat(lock.renewalInFlight(first, now + 3)).isFalse();
        assertThat(lock.renewalSent(first, now + 5)).as("a renewal of a holding no longer the lock's").isFalse();
        assertThat(lock.renewalSent(second, now + 5)).isTrue();
        assertThat(lock.renewalEnded(first, now + 3)).isFalse();
        assertThat(lock.renewalInFlight(second, now + 5)).isTrue();

        lock.renewalDropped(second);
        assertThat(lock.renewalInFlight(second)).isFalse();
        assertThat(lock.renewalSent(second, now + 6)).isTrue();
        lock.releasing();
        assertThat(lock.renewalInFlight(second)).as("after the release").isFalse();
    }
}
