package io.github.redislock.core;

/**
 * Told when a held lock is found to be lost before its release: the watchdog found it gone
 * (expired, deleted, Redis restarted without it) or could not renew it before its lease ended.
 * Called on the watchdog's thread; keep it short.
 */
@FunctionalInterface
public interface LockLostListener {

    void lockLost(LockHandle lock, String reason);
}
