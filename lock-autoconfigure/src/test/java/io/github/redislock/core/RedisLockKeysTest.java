package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RedisLockKeysTest {

    private final RedisLockKeys keys = new RedisLockKeys("redis-lock");

    @Test
    void everyKeyOfOneLockSharesOneHashTag() {
        assertThat(keys.lock("orders:42")).isEqualTo("redis-lock:{orders:42}");
        assertThat(keys.fence("orders:42")).isEqualTo("redis-lock:{orders:42}:fence");
        assertThat(keys.waiters("orders:42")).isEqualTo("redis-lock:{orders:42}:waiters");
        assertThat(keys.wakeChannelPrefix()).isEqualTo("redis-lock:wake:");
    }

    @Test
    void aKeyOfExactly512BytesIsAcceptedAndOneMoreIsNot() {
        assertThat(RedisLockKeys.validate("é".repeat(256))).hasSize(256); // 2 bytes each
        assertThatThrownBy(() -> RedisLockKeys.validate("é".repeat(256) + "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was 513 bytes");
    }

    @Test
    void aControlCharacterIsNamedByItsPosition() {
        assertThatThrownBy(() -> RedisLockKeys.validate("order\t42"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at index 5").hasMessageContaining("order?42");
    }

    @Test
    void aPrefixThatWouldBreakTheHashTagIsRejected() {
        assertThatThrownBy(() -> new RedisLockKeys("app{1}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hash tag");
        assertThatThrownBy(() -> new RedisLockKeys(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key prefix");
    }

    @Test
    void optionsDescribeThemselves() {
        assertThat(LockOptions.defaults()).hasToString("LockOptions[wait=default, lease=watchdog]");
        assertThat(LockOptions.waitFor(java.time.Duration.ofMillis(1500)).withLease(java.time.Duration.ofSeconds(30)))
                .hasToString("LockOptions[wait=1500ms, lease=30s]");
    }
}
