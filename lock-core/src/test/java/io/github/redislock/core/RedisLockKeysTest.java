package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;

class RedisLockKeysTest {

    private final RedisLockKeys keys = new RedisLockKeys("redis-lock");

    @Test
    void everyKeyOfOneLockSharesOneHashTag() {
        assertThat(keys.lock("orders:42")).isEqualTo("redis-lock:{orders:42}");
        assertThat(keys.fence("orders:42")).isEqualTo("redis-lock:{orders:42}:fence");
        assertThat(keys.waiters("orders:42")).isEqualTo("redis-lock:{orders:42}:waiters");
        assertThat(keys.wakeChannelPrefix()).isEqualTo("redis-lock:wake:");
    }

    @ParameterizedTest
    @ValueSource(strings = {"}", "{", "{}", "}{", "}x", "}}", "}{x}", "x}", "a}b", "{x}", "{orders}:42", "%7D", "100%}",
            "orders:42"})
    void theKeysOfAnyKeyShareOneClusterSlot(String key) {
        List<String> names = List.of(keys.lock(key), keys.fence(key), keys.waiters(key), keys.waiterExpiries(key),
                keys.abandoned(key));
        Set<Integer> slots = names.stream().map(ClusterSlotHashUtil::calculateSlot).collect(Collectors.toSet());
        assertThat(slots).as("slots of %s", names).hasSize(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"}", "{x}", "}{%", "orders:42", "zamówienie:42"})
    void theEncodedKeysAScriptCallSendsAreTheNamedKeysInUtf8(String key) {
        assertThat(decoded(keys.exclusiveKeysEncoded(key)))
                .isEqualTo(List.of(keys.lock(key), keys.fence(key), keys.waiters(key), keys.waiterExpiries(key)));
        assertThat(decoded(keys.exclusiveAcquireKeysEncoded(key))).isEqualTo(List.of(keys.lock(key), keys.fence(key),
                keys.waiters(key), keys.waiterExpiries(key), keys.abandoned(key)));
        assertThat(decoded(keys.fairKeysEncoded(key))).isEqualTo(List.of(keys.lock(key), keys.fence(key), keys.fairQueue(key),
                keys.fairQueueExpiries(key), keys.abandoned(key)));
        assertThat(decoded(keys.fairReleaseKeysEncoded(key))).isEqualTo(List.of(keys.lock(key), keys.fence(key),
                keys.fairQueue(key), keys.fairQueueExpiries(key), keys.waiters(key), keys.waiterExpiries(key)));
        assertThat(decoded(keys.readWriteEncoded(key))).isEqualTo(keys.readWrite(key));
        assertThat(decoded(keys.readWriteAcquireEncoded(key))).isEqualTo(
                Stream.concat(keys.readWrite(key).stream(), Stream.of(keys.abandoned(key))).toList());
        assertThat(decoded(keys.semaphoreAcquireKeysEncoded(key))).isEqualTo(List.of(keys.semaphoreHolders(key),
                keys.semaphorePermits(key), keys.semaphoreLimit(key), keys.semaphoreFence(key), keys.semaphoreWaiters(key),
                keys.semaphoreWaiterExpiries(key), keys.abandoned(key)));
        assertThat(decoded(keys.semaphoreReleaseKeysEncoded(key))).isEqualTo(List.of(keys.semaphoreHolders(key),
                keys.semaphorePermits(key), keys.semaphoreWaiters(key), keys.semaphoreWaiterExpiries(key),
                keys.semaphoreLimit(key), keys.semaphoreFence(key)));
        assertThat(decoded(new byte[][] {keys.wakeChannelPrefixEncoded()})).containsExactly(keys.wakeChannelPrefix());
    }

    @Test
    void aLockNameIsEncodedAsItselfEvenWhenNamesShareACacheSlot() {
        // "Aa" and "BB" have the same hashCode, so they take turns in one slot of the recent names
        for (int round = 0; round < 3; round++) {
            for (String key : new String[] {"Aa", "BB", "orders:é"}) {
                assertThat(new String(keys.nameEncoded(key), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(key);
            }
        }
        assertThat(keys.nameEncoded("orders:42")).isSameAs(keys.nameEncoded("orders:42")); // encoded once while recent
    }

    @Test
    void theReadWriteKeysAreNamedAfterTheLock() {
        assertThat(keys.readWrite("orders:42")).containsExactly("redis-lock:{orders:42}:rw:writer",
                "redis-lock:{orders:42}:rw:readers", "redis-lock:{orders:42}:rw:epoch", "redis-lock:{orders:42}:rw:fence",
                "redis-lock:{orders:42}:rw:writers-waiting", "redis-lock:{orders:42}:rw:waiters",
                "redis-lock:{orders:42}:rw:waiters:expiry");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 9, 10, 99, 100, 30_000, 1_795_653_131_116_110L, -1, -10, -987, Long.MAX_VALUE, Long.MIN_VALUE})
    void aNumberArgumentIsItsDecimalText(long value) {
        assertThat(new String(ScriptRunner.number(value), java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo(Long.toString(value));
    }

    private static List<String> decoded(byte[][] encoded) {
        return java.util.Arrays.stream(encoded).map(bytes -> new String(bytes, java.nio.charset.StandardCharsets.UTF_8))
                .toList();
    }

    @Test
    void aKeyThatBeginsWithAClosingBraceIsStoredEncodedAndMeetsNoOtherKey() {
        assertThat(keys.lock("}x")).isEqualTo("redis-lock:%{%7Dx}");
        assertThat(keys.fence("}{%")).isEqualTo("redis-lock:%{%7D%7B%25}:fence");
        assertThat(keys.lock("x}")).as("other keys keep their names").isEqualTo("redis-lock:{x}}");
        assertThat(keys.lock("{x}")).isEqualTo("redis-lock:{{x}}");
        List<String> distinct = List.of("}x", "%7Dx", "}X", "}", "}}", "%}", "%7D", "}%7D", "}%");
        assertThat(distinct.stream().map(keys::lock).distinct()).hasSameSizeAs(distinct);
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
