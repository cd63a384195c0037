package io.github.redislock.core;

import java.time.Duration;
import java.util.Objects;

/**
 * The settings a {@link RedisLockTemplate} is built with.
 *
 * @param keyPrefix prefix of every Redis key and channel the locks use
 * @param defaultWaitTime how long {@link RedisLockTemplate#acquire} waits when the options name no wait time
 * @param watchdogLease the lease of a lock without an explicit lease; renewed every third of it while held
 * @param replicaAck how many replicas must acknowledge each acquisition and renewal, and how long to wait for them;
 *        {@link ReplicaAck#OFF} by default
 */
public record RedisLockConfig(String keyPrefix, Duration defaultWaitTime, Duration watchdogLease, ReplicaAck replicaAck) {

    public static final String DEFAULT_KEY_PREFIX = "redis-lock";
    public static final Duration DEFAULT_WAIT_TIME = Duration.ofSeconds(10);
    public static final Duration DEFAULT_WATCHDOG_LEASE = Duration.ofSeconds(30);

    public RedisLockConfig(String keyPrefix, Duration defaultWaitTime, Duration watchdogLease) {
        this(keyPrefix, defaultWaitTime, watchdogLease, ReplicaAck.OFF);
    }

    public RedisLockConfig {
        new RedisLockKeys(keyPrefix); // validates the prefix
        Objects.requireNonNull(replicaAck, "replicaAck");
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
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck);
    }

    public RedisLockConfig withDefaultWaitTime(Duration defaultWaitTime) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck);
    }

    public RedisLockConfig withWatchdogLease(Duration watchdogLease) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck);
    }

    /** Requires {@code replicas} replicas to acknowledge every acquisition and renewal within {@code timeout}. */
    public RedisLockConfig withReplicaAck(int replicas, Duration timeout) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, new ReplicaAck(replicas, timeout));
    }

    /**
     * Replica acknowledgement: after every script that grants or extends a lock, {@code WAIT replicas timeout} on the
     * same connection. A grant acknowledged by fewer replicas is taken back and reported as not acquired; a renewal
     * acknowledged by fewer counts as a failed renewal (retried; the lock is lost if its lease runs out first).
     * WAIT tells that the write reached that many replicas' memory: not their disk, and a failover may still promote a
     * replica that did not get it (see the README's deployment table).
     *
     * @param replicas how many replicas must acknowledge; 0 turns it off
     * @param timeout how long the master waits for them, at least 1ms (WAIT's 0 would wait forever)
     */
    public record ReplicaAck(int replicas, Duration timeout) {

        public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);
        public static final ReplicaAck OFF = new ReplicaAck(0, DEFAULT_TIMEOUT);

        public ReplicaAck {
            Objects.requireNonNull(timeout, "redis-lock.replica-ack.timeout");
            if (replicas < 0) {
                throw new IllegalArgumentException("redis-lock.replica-ack.replicas must not be negative, was " + replicas);
            }
            if (timeout.toMillis() < 1) {
                throw new IllegalArgumentException("redis-lock.replica-ack.timeout must be at least 1ms (WAIT with 0 "
                        + "would wait forever), was " + timeout);
            }
        }

        /** Whether acquisitions and renewals wait for replicas. */
        public boolean enabled() {
            return replicas > 0;
        }
    }
}
