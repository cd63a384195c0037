package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void anUnboundedWaitPrintsAsSuchInsteadOfOverflowing() {
        assertThat(new LockNotAcquiredException("k", LockOptions.WAIT_FOREVER)).hasMessageContaining("unbounded time");
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.format(Duration.ofSeconds(2))).isEqualTo("2s");
    }
}
