package io.github.redislock.core;

import java.time.Duration;
import java.util.Objects;

/**
 * The settings a {@link RedisLockTemplate} is built with.
 *
 * @param keyPrefix prefix of every Redis key and channel the locks use
 * @param defaultWaitTime how long {@link RedisLockTemplate#acquire} waits when the options name no wait time
 * @param watchdogLease the lease of a lock without an explicit lease; renewed every third of it while held
 */
public record RedisLockConfig(String keyPrefix, Duration defaultWaitTime, Duration watchdogLease) {

    public static final String DEFAULT_KEY_PREFIX = "redis-lock";
    public static final Duration DEFAULT_WAIT_TIME = Duration.ofSeconds(10);
    public static final Duration DEFAULT_WATCHDOG_LEASE = Duration.ofSeconds(30);

    public RedisLockConfig {
        new RedisLockKeys(keyPrefix); // validates the prefix
        Objects.requireNonNull(defaultWaitTime, "defaultWaitTime");
        Objects.requireNonNull(watchdogLease, "watchdogLease");
        if (defaultWaitTime.isNegative()) {
            throw new IllegalArgumentException("defaultWaitTime must not be negative, was " + defaultWaitTime);
        }
        if (watchdogLease.toMillis() < 3) {
            throw new IllegalArgumentException("watchdogLease must be at least 3ms, was " + watchdogLease);
        }
    }

    /** Prefix {@code redis-lock}, wait 10s, watchdog lease 30s. */
    public static RedisLockConfig defaults() {
        return new RedisLockConfig(DEFAULT_KEY_PREFIX, DEFAULT_WAIT_TIME, DEFAULT_WATCHDOG_LEASE);
    }

    public RedisLockConfig withKeyPrefix(String keyPrefix) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease);
    }

    public RedisLockConfig withDefaultWaitTime(Duration defaultWaitTime) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease);
    }

    public RedisLockConfig withWatchdogLease(Duration watchdogLease) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease);
    }
}
