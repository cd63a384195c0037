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
}
