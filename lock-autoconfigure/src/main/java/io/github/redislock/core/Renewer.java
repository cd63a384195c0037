package io.github.redislock.core;

import io.github.redislock.core.RedisLockDiagnostics.Kind;

/**
 * How the {@link Watchdog} renews one kind of holding in Redis. Every lock type records its holding in a
 * {@link LocalLock} (owner, fencing token, lease, when the lease was last set, whether it was lost); the watchdog
 * decides when to renew it, keeps one renewal in flight, resends one left unanswered, and marks it lost the same
 * way for every kind. Only the script that extends the lease differs, and that is this.
 *
 * @param kind which lock type's holdings this renews, for diagnostics and log lines
 * @param call the Redis call that extends a holding's lease
 */
record Renewer(Kind kind, Call call) {

    /** The Redis call that extends one holding's lease. */
    @FunctionalInterface
    interface Call {

        /**
         * Extends {@code owner}'s lease of {@code key} to at least {@code leaseMillis}, never shortening it.
         *
         * @return {@code true} when renewed; {@code false} when Redis no longer has the holding (the watchdog then
         *         marks it lost)
         * @throws RuntimeException when Redis could not be asked; the watchdog tries again while the lease lasts
         */
        boolean renew(String key, String owner, long leaseMillis);
    }

    /** How log lines and lost-lock reasons name a holding of this kind on {@code key}. */
    String describe(String key) {
        return switch (kind) {
            case EXCLUSIVE -> "lock '" + key + "'";
            case FAIR -> "fair lock '" + key + "'";
            case READ -> "the read lock of '" + key + "'";
            case WRITE -> "the write lock of '" + key + "'";
            case SEMAPHORE -> "the permits of semaphore '" + key + "'";
        };
    }

    /** What the watchdog found gone, in a lost-lock reason: "it", "its read lease", ... */
    String whatIsGone() {
        return switch (kind) {
            case EXCLUSIVE, FAIR -> "it";
            case READ -> "its read lease";
            case WRITE -> "its write lease";
            case SEMAPHORE -> "its permits";
        };
    }
}
