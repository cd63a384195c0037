package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.LockScripts.ReleaseReply;
import org.junit.jupiter.api.Test;

/** How the numbers the lock scripts answer with read, where one number carries two things. */
class LockScriptsRepliesTest {

    private static final long SERVER_MILLIS = 1_795_712_602_128L % LockScripts.GRANT_CLOCK_MODULUS;

    @Test
    void aMissToACallerThatTakesGrantsTellsTheTtlAndTheServerTime() {
        AcquireReply miss = AcquireReply.ofGranting(-(4321 + 8192 * SERVER_MILLIS));
        assertThat(miss.acquired()).isFalse();
        assertThat(miss.retryAfterMillis()).isEqualTo(4321);
        assertThat(miss.missedAt()).isEqualTo(SERVER_MILLIS);
        AcquireReply held = AcquireReply.ofGranting(1_795_712_602_128_351L);
        assertThat(held.token()).isEqualTo(1_795_712_602_128_351L);
        assertThat(AcquireReply.of(-4321L).missedAt()).as("a caller that takes no grants").isEqualTo(-1);
    }

    @Test
    void aReleaseThatRegisteredItsClientTellsWhenAsAMissDoes() {
        ReleaseReply granted = ReleaseReply.of(-(2 + 4 * SERVER_MILLIS));
        assertThat(granted.registered()).isTrue();
        assertThat(granted.turnKept()).isTrue();
        assertThat(granted.registeredAt()).isEqualTo(SERVER_MILLIS);
        ReleaseReply released = ReleaseReply.of(-(1 + 4 * SERVER_MILLIS));
        assertThat(released.turnKept()).isFalse();
        assertThat(released.registeredAt()).isEqualTo(SERVER_MILLIS);
        assertThat(ReleaseReply.of(-2L).registeredAt()).as("a release that grants nothing").isEqualTo(-1);
        assertThat(ReleaseReply.of(-2L).turnKept()).isTrue();
    }
}
