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
 * @param asyncHolders how many platform threads may hold asynchronous locks at once on Java 17-20, and how long a call
 *        waits for one; {@link AsyncHolders#DEFAULTS} by default
 */
public record RedisLockConfig(String keyPrefix, Duration defaultWaitTime, Duration watchdogLease, ReplicaAck replicaAck,
        AsyncHolders asyncHolders) {

    public static final String DEFAULT_KEY_PREFIX = "redis-lock";
    public static final Duration DEFAULT_WAIT_TIME = Duration.ofSeconds(10);
    public static final Duration DEFAULT_WATCHDOG_LEASE = Duration.ofSeconds(30);

    public RedisLockConfig(String keyPrefix, Duration defaultWaitTime, Duration watchdogLease) {
        this(keyPrefix, defaultWaitTime, watchdogLease, ReplicaAck.OFF);
    }

    public RedisLockConfig(String keyPrefix, Duration defaultWaitTime, Duration watchdogLease, ReplicaAck replicaAck) {
        this(keyPrefix, defaultWaitTime, watchdogLease, replicaAck, AsyncHolders.DEFAULTS);
    }

    public RedisLockConfig {
        new RedisLockKeys(keyPrefix); // validates the prefix
        Objects.requireNonNull(replicaAck, "replicaAck");
        Objects.requireNonNull(asyncHolders, "asyncHolders");
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
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck, asyncHolders);
    }

    public RedisLockConfig withDefaultWaitTime(Duration defaultWaitTime) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck, asyncHolders);
    }

    public RedisLockConfig withWatchdogLease(Duration watchdogLease) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck, asyncHolders);
    }

    /** Requires {@code replicas} replicas to acknowledge every acquisition and renewal within {@code timeout}. */
    public RedisLockConfig withReplicaAck(int replicas, Duration timeout) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, new ReplicaAck(replicas, timeout), asyncHolders);
    }

    /**
     * Lets at most {@code maxHolders} platform threads hold asynchronous locks at once (Java 17-20), a call waiting up to
     * {@code holderWait} for a free one; see {@link AsyncHolders}.
     */
    public RedisLockConfig withAsyncHolders(int maxHolders, Duration holderWait) {
        return new RedisLockConfig(keyPrefix, defaultWaitTime, watchdogLease, replicaAck, new AsyncHolders(maxHolders, holderWait));
    }

    /**
     * The holder threads of asynchronous locks ({@link RedisLockTemplate#asyncExecutor()}) on Java 17-20, where they are
     * platform threads: at most {@code maxHolders} at once, each holding or waiting for one lock; a call finding none
     * free waits up to {@code holderWait} for one (its lock wait starts once it has one), then fails with
     * {@link java.util.concurrent.RejectedExecutionException}, without blocking the caller's thread. On Java 21+ holders
     * are virtual threads, one per call, unbounded.
     *
     * @param maxHolders at least 1 ({@code redis-lock.async.max-holders})
     * @param holderWait not negative ({@code redis-lock.async.holder-wait})
     */
    public record AsyncHolders(int maxHolders, Duration holderWait) {

        public static final AsyncHolders DEFAULTS = new AsyncHolders(256, Duration.ofSeconds(10));

        public AsyncHolders {
            Objects.requireNonNull(holderWait, "redis-lock.async.holder-wait");
            if (maxHolders < 1) {
                throw new IllegalArgumentException("redis-lock.async.max-holders must be at least 1, was " + maxHolders);
            }
            if (holderWait.isNegative()) {
                throw new IllegalArgumentException("redis-lock.async.holder-wait must not be negative, was " + holderWait);
            }
        }
    }

    /**
     * Replica acknowledgement: after every script that grants or extends a lock, {@code WAIT replicas timeout} on the
     * same connection. A grant acknowledged by fewer replicas is taken back and reported as not acquired; a renewal
     * acknowledged by fewer counts as a failed renewal (retried; the lock is lost if its lease runs out first).
     * WAIT tells that the write reached that many replicas' memory: not their disk, and a failover may still promote a
     * replica that did not get it (see docs/deployments.md, "Replica acknowledgement").
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
