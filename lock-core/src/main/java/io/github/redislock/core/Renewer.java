package io.github.redislock.core;

import java.util.List;


/**
 * How the {@link Watchdog} renews one kind of holding in Redis. Every lock type records its holding in a
 * {@link LocalLock} (owner, fencing token, lease, when the lease was last set, whether it was lost); the watchdog
 * decides when to renew it, keeps one renewal in flight, resends one left unanswered, and marks it lost the same
 * way for every kind. Only the script that extends the lease differs, and that is this.
 *
 * @param kind which lock type's holdings this renews, for diagnostics and log lines
 * @param call the Redis call that extends a holding's lease
 * @param many the Redis call that extends many holdings' leases at once, or {@code null} when each is renewed alone;
 *        the watchdog sends the holdings due at one tick in batches of up to {@link Watchdog#MAX_BATCH} through it
 */
record Renewer(LockType kind, Call call, Many many) {

    /** A renewer of holdings one at a time. */
    Renewer(LockType kind, Call call) {
        this(kind, call, null);
    }

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

    /** The Redis call that extends many holdings' leases in one go (one script call per hash slot in Redis Cluster, where a batch holds one master's holdings). */
    @FunctionalInterface
    interface Many {

        /**
         * Extends the i-th owner's lease of the i-th key to at least the i-th lease, never shortening one.
         *
         * @return per key whether it was renewed, is gone, or could not be asked
         * @throws RuntimeException when Redis could not be asked at all; the watchdog tries again while the leases last
         */
        Replies renew(List<String> keys, List<String> owners, long[] leaseMillis);

        /**
         * Which Redis node serves {@code key}: in Redis Cluster its hash slot's master ({@code host:port}) as last seen,
         * so that each master's holdings are renewed apart and a slow or frozen one holds up no other's; {@code null}
         * when there is one node, or the node is not known yet.
         */
        default String nodeOf(String key) {
            return null;
        }

        /**
         * Which batch of its node's {@code key} may share: its hash slot in Redis Cluster when the driver cannot
         * pipeline a master's calls (one script call takes keys of one slot only, and the slots' calls then go out
         * side by side); else 0 for all.
         */
        default int batchOf(String key) {
            return 0;
        }
    }

    /**
     * What a batched renewal found.
     *
     * @param outcomes one character per key, in the order asked: {@link #RENEWED}, {@link #GONE} or {@link #NOT_ASKED}
     * @param failure why some keys were not asked (their hash slot's node failed), or {@code null}
     */
    record Replies(String outcomes, RuntimeException failure) {

        static final char RENEWED = '1';
        static final char GONE = '0';
        static final char NOT_ASKED = '?';
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
