package io.github.redislock.core;

import java.time.Duration;

import org.springframework.dao.TransientDataAccessException;

/**
 * Fewer replicas than {@code redis-lock.replica-ack.replicas} acknowledged a lock write within the timeout. An
 * acquisition that meets this was taken back and is reported as not acquired ({@link LockNotAcquiredException},
 * with this as its cause); a renewal that meets it counts as failed and is retried.
 */
public final class ReplicaAckException extends TransientDataAccessException {

    private final long acknowledged;
    private final int required;
    private final Duration timeout;

    ReplicaAckException(String what, long acknowledged, int required, Duration timeout, String outcome) {
        super(what + " acknowledged by " + acknowledged + " of " + required + " replica" + (required == 1 ? "" : "s")
                + " within " + Durations.format(timeout) + " (redis-lock.replica-ack)" + outcome);
        this.acknowledged = acknowledged;
        this.required = required;
        this.timeout = timeout;
    }

    /** How many replicas acknowledged the write in time. */
    public long getAcknowledged() {
        return acknowledged;
    }

    /** How many were required ({@code redis-lock.replica-ack.replicas}). */
    public int getRequired() {
        return required;
    }

    /** How long the master waited for them ({@code redis-lock.replica-ack.timeout}). */
    public Duration getTimeout() {
        return timeout;
    }
}
