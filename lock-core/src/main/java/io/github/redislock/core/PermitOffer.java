package io.github.redislock.core;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.github.redislock.core.WaitLoop.Deadline;

/**
 * What a queued thread asks for, so that a release by another thread can hand it permits: claimed by at most
 * one release at a time, settled by it with a token or nothing, closed by the waiter when it stops waiting. A
 * waiter whose wait time ends while a release has its offer claimed does not wait for that release (which may be
 * stuck in Redis up to the driver's timeout): it withdraws, and the release returns what it handed over. While the
 * thread's own acquire script is under way, no release may claim it: a release then returns its permits to Redis,
 * where that script finds them or they wake the client, so no thread ever waits for another thread's release.
 * <p>
 * Posted by {@link PermitWaiting}, queued in {@link PermitQueues}, claimed and settled by {@link PermitRelease}.
 */
final class PermitOffer {

    /** How a queued thread's wait for its turn ended. */
    enum Turn { FIRST, HANDED, TIMED_OUT }

    final String holder;
    final int permits;
    final long leaseMillis;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private boolean first;
    private boolean claimed;
    private boolean closed;
    /** Its thread's own acquire script is under way: not to be claimed until that script has answered. */
    private boolean asking;
    private long token;
    private long grantedAtNanos;
    /** A claiming release failed to reach Redis: it may have handed permits over that nobody knows of. */
    private boolean uncertain;
    /** The waiter stopped waiting while a release had it claimed: that release returns what it hands over. */
    private boolean withdrawn;

    PermitOffer(String holder, int permits, long leaseMillis) {
        this.holder = holder;
        this.permits = permits;
        this.leaseMillis = leaseMillis;
    }

    /** It is the first of its queue now: it asks Redis. */
    void becomeFirst() {
        lock.lock();
        try {
            first = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    boolean isFirst() {
        lock.lock();
        try {
            return first;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether its thread still waits for permits: not claimed by a release, not settled, not closed. It may be asking
     * Redis itself meanwhile, when no release can claim it.
     */
    boolean isOpen() {
        lock.lock();
        try {
            return !claimed && !closed;
        } finally {
            lock.unlock();
        }
    }

    boolean claim() {
        lock.lock();
        try {
            if (claimed || closed || asking) {
                return false;
            }
            claimed = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends a claim: {@code grantedToken} > 0 when the release handed the permits over.
     *
     * @return whether the waiter withdrew meanwhile and permits were (or may have been) handed to it: the
     *         release must return them
     */
    boolean settle(long grantedToken, long requestStartNanos, boolean failed) {
        lock.lock();
        try {
            if (withdrawn) {
                claimed = false;
                changed.signalAll();
                return grantedToken > 0 || failed;
            }
            if (grantedToken > 0) {
                token = grantedToken;
                grantedAtNanos = requestStartNanos;
                closed = true;
            }
            uncertain |= failed;
            claimed = false;
            changed.signalAll();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until permits are handed to it, it is first in its queue, or the deadline passes. */
    Turn awaitTurn(Deadline deadline) throws InterruptedException {
        lock.lock();
        try {
            while (true) {
                if (token > 0) {
                    return Turn.HANDED;
                }
                if (first) {
                    return Turn.FIRST;
                }
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    return Turn.TIMED_OUT; // also while a release hands permits over: it returns them then
                }
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The token handed over, or 0; waits for a claiming release's answer first, until the deadline: -1 when a
     * release still hands permits over then.
     */
    long granted(Deadline deadline) {
        return granted(deadline, false);
    }

    /**
     * Like {@link #granted(Deadline)}; when it returns 0, no release may claim the offer until {@link #answered} is
     * called: its thread asks Redis itself now. A release that had claimed it just before was waited for above.
     */
    long grantedOrAsk(Deadline deadline) {
        return granted(deadline, true);
    }

    /** Its thread's own acquire script answered (or failed): releases may claim it again, unless it holds permits now. */
    void answered(boolean acquired) {
        lock.lock();
        try {
            asking = false;
            closed |= acquired;
        } finally {
            lock.unlock();
        }
    }

    private long granted(Deadline deadline, boolean thenAsk) {
        lock.lock();
        try {
            try {
                while (claimed && deadline.remainingNanos() > 0) {
                    changed.awaitNanos(deadline.remainingNanos());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the wait loop ends the wait on it
            }
            long found = claimed ? -1 : token;
            asking = thenAsk && found == 0;
            return found;
        } finally {
            lock.unlock();
        }
    }

    /**
     * No release claims it any more. Returns whether permits may have been handed over that the caller must
     * return; a release under way returns what it hands over itself, so a waiter that gave up does not wait for it.
     * A thread that took its permits with its own acquire had its offer closed to releases from before that script
     * until it answered ({@link #grantedOrAsk}), so no release can be handing it permits now: one that did after
     * its acquire would give its finished acquisition permits that no thread holds or renews.
     */
    boolean close() {
        lock.lock();
        try {
            closed = true;
            if (claimed) {
                withdrawn = true;
                return false;
            }
            return token > 0 || uncertain;
        } finally {
            lock.unlock();
        }
    }

    long grantedAtNanos() {
        lock.lock();
        try {
            return grantedAtNanos;
        } finally {
            lock.unlock();
        }
    }
}
