package io.github.redislock.core;

import static io.github.redislock.core.ScriptRunner.ONE;
import static io.github.redislock.core.ScriptRunner.ZERO;

import java.nio.charset.StandardCharsets;

/**
 * Which attempt of an acquisition a request is: its number (1, 2, ...) and whether an earlier attempt of the same
 * acquisition failed. Sent with each request, so one that reaches Redis after its client gave up on it changes nothing
 * there: the attempt after a failed one records every attempt before it as given up, and a client that gives up after
 * a failed attempt records them all ({@link LockStore#abandon}); see {@code lib/stale.lua}.
 *
 * @param number the attempt's number in its acquisition, from 1
 * @param afterFailure whether an earlier attempt of the acquisition failed (its request may still land)
 */
record AttemptNumber(int number, boolean afterFailure) {

    /** An acquisition's first attempt, and every attempt of one that never failed, for a call made once. */
    static final AttemptNumber FIRST = new AttemptNumber(1, false);

    AttemptNumber {
        if (number < 1) {
            throw new IllegalArgumentException("attempts are numbered from 1: " + number);
        }
    }

    /** Attempt {@code number}, {@link #FIRST} for the first of an acquisition with no failure (no allocation). */
    static AttemptNumber of(int number, boolean afterFailure) {
        return number == 1 && !afterFailure ? FIRST : new AttemptNumber(number, afterFailure);
    }

    /** {@link #number}, as a script argument. */
    byte[] numberBytes() {
        return number == 1 ? ONE : Integer.toString(number).getBytes(StandardCharsets.US_ASCII);
    }

    /** {@link #afterFailure}, as a script argument: {@code "1"} or {@code "0"}. */
    byte[] afterFailureBytes() {
        return afterFailure ? ONE : ZERO;
    }
}
