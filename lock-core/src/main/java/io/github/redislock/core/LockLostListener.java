package io.github.redislock.core;

/**
 * Told when a held lock is found to be lost before its release: the watchdog found it gone
 * (expired, deleted, Redis restarted without it) or could not renew it before its lease ended, or a fair
 * lock taken from its hand-over message found the hand-over gone when confirming it. Told once per loss.
 * Called on a thread of its own ({@code redis-lock-listeners}), one notification after another in the
 * order the losses were found: a slow listener delays the other listeners, never a renewal.
 */
@FunctionalInterface
public interface LockLostListener {

    void lockLost(LockHandle lock, String reason);
}
