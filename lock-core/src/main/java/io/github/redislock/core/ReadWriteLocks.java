package io.github.redislock.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * The read/write lock type: many readers or one writer, across threads and JVMs.
 * <p>
 * <b>One read share per JVM.</b> The first reading thread of this client takes a read share in Redis (a reader entry
 * with its own lease, renewed by the watchdog); further reading threads join that share in memory, counted in its
 * {@link ReadShare}, while it is held and no writer waits, and the last one to leave releases it in Redis. So a JVM
 * that crashes frees only its own share when that lease ends, and the other JVMs read on. A writer that waits stops
 * threads joining: a writer of this client closes the share at each of its attempts; a writer of another client
 * publishes a notice to the clients that read when it starts waiting, and if that message is lost, the share's next
 * renewal reports the waiting writer (so threads may join for at most a renewal interval, a quarter to a third of the
 * lease, after the writer began to wait). A thread that finds the share closed opens a new one in Redis, where a
 * waiting writer keeps it out; one thread of this client at a time opens one (the others wait for it and join).
 * Readers with a fixed lease, and a writer taking the read lock (downgrade), hold their own reader entry instead.
 * Nested acquisitions by the holding thread are counted in memory, per thread and key, and cost no round trip.
 * <p>
 * Why the rules are what they are:
 * <ul>
 * <li>The write lock's holder may take the read lock (downgrade): it then releases the write lock and reads on,
 * with no writer able to slip in between.</li>
 * <li>A reader asking for the write lock is refused at once with {@link IllegalMonitorStateException}: two readers
 * upgrading would each wait for the other to stop reading, forever.</li>
 * <li>A writer that waits enters itself as waiting for the length of its next sleep plus a second, and new readers
 * stay out meanwhile: a stream of overlapping readers cannot starve it.</li>
 * <li>Fencing: each write acquisition gets a token above every earlier one of the lock; readers get the token of
 * their read epoch (drawn when the first reader entered after no one read, and shared by the readers joining it,
 * in Redis or in a read share), so a write after those reads carries a greater token than they did.</li>
 * </ul>
 * Each Redis holding is watched by the {@link Watchdog} from acquisition to release, which renews those without an
 * explicit lease time as it renews every lock type's, and marks one it finds gone lost and tells the
 * {@link LockLostListener}s.
 * <p>
 * This class keeps each thread's holds and runs the reader and writer paths; {@link ReadShares} keeps the read
 * shares and this client's writer count, and {@link ReadWriteRedis} does the waiting and releasing in Redis.
 */
final class ReadWriteLocks implements LockEngine {

    /** Where the threads of this client waiting for a key sleep; woken when a release of the key is published. */
    private final LocalLocks waiting = new LocalLocks();
    private final Watchdog watchdog;
    private final ReadWriteRedis redis;
    private final ReadShares shares;
    private final Renewer writeRenewer;
    /** The current thread's holds, by key. */
    private final ThreadLocal<Map<String, Holds>> holds = ThreadLocal.withInitial(HashMap::new);

    ReadWriteLocks(LockScripts scripts, EngineContext context) {
        this.watchdog = context.watchdog;
        this.redis = new ReadWriteRedis(scripts, waiting, context);
        this.shares = new ReadShares(scripts, redis, waiting, context.waitLoop, watchdog);
        this.writeRenewer = new Renewer(LockType.WRITE, (key, owner, leaseMillis) -> scripts.readWriteRenew(key, owner, true, leaseMillis),
                scripts.renewManyWriteLocks());
    }

    /**
     * One thread's holds on one key: each side's Redis holding (a {@link LocalLock} used as its record) and count,
     * and the read share the read side joined (or {@code null} when the thread has its own reader entry).
     */
    private static final class Holds {
        @Nullable LocalLock read;
        int reads;
        @Nullable ReadShare share;
        @Nullable LocalLock write;
        int writes;
    }

    /** The message telling a client that a writer waits for {@code key}. */
    static String writerWaits(String key) {
        return ReadShares.writerWaits(key);
    }

    /**
     * A release of {@code key} was published to this client: its threads waiting for the key look again. Or a
     * writer waits for a key: this client's threads stop joining its read share.
     */
    @Override
    public boolean wake(String key) {
        if (!shares.closeOnNotice(key)) {
            waiting.wake(key);
        }
        return false;
    }

    /** This client's read share of {@code key} and the readers in it (for tests); {@code 0} when it has none open. */
    int shareReaders(String key) {
        return shares.readers(key);
    }

    /** Releases may have been missed: every waiting thread looks again. */
    @Override
    public void wakeAll() {
        waiting.wakeAll();
    }

    /** The keys threads of this client wait for, on either side (one lock: named as the read side). */
    @Override
    public Stream<String> inUse() {
        return waiting.keys().map(key -> RedisLockDiagnostics.inUse(LockType.READ, key));
    }

    /**
     * The template API's acquisition: an interrupt while waiting ends the wait with
     * {@link LockNotAcquiredException} and leaves the thread's interrupt flag set.
     */
    Optional<LockHandle> tryAcquire(String key, LockType mode, Duration wait, @Nullable Duration lease) {
        try {
            LocalLock holding = lock(key, mode, wait, lease, true);
            return holding == null ? Optional.empty() : Optional.of(new Handle(key, mode, holding));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, wait, e);
        }
    }

    /**
     * Takes one side of the lock for the current thread.
     *
     * @param lease the fixed lease, or {@code null} for the watchdog
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}
     * @return the Redis holding, held by the current thread; {@code null} on timeout
     * @throws IllegalMonitorStateException when a reader asks for the write lock
     * @throws LockLostException when the thread re-enters (or downgrades) a holding that was lost
     */
    @Nullable LocalLock lock(String key, LockType mode, Duration wait, @Nullable Duration lease, boolean interruptible)
            throws InterruptedException {
        Holds mine = holds.get().get(key);
        if (mine != null) {
            if (mode == LockType.WRITE && mine.writes > 0) {
                return reenter(mine.write, () -> mine.writes++);
            }
            if (mode == LockType.READ && mine.reads > 0) {
                return reenter(mine.read, () -> mine.reads++);
            }
            if (mode == LockType.WRITE) {
                throw new IllegalMonitorStateException("Read/write lock '" + key + "': thread '"
                        + Thread.currentThread().getName() + "' holds the read lock and asked for the write lock; upgrading "
                        + "is not supported (two readers upgrading would wait for each other forever). Release the read "
                        + "lock, acquire the write lock, and check again what you read: it may have changed meanwhile");
            }
        }
        String downgradingWriter = "";
        if (mine != null && mine.writes > 0) {
            checkValid(mine.write);
            downgradingWriter = mine.write.owner;
        }
        if (mode == LockType.READ && lease == null && downgradingWriter.isEmpty()) {
            ReadShare share = shares.joinOrOpen(key, wait, interruptible);
            if (share == null) {
                return null;
            }
            Holds recorded = holds.get().computeIfAbsent(key, k -> new Holds());
            recorded.read = share.holding;
            recorded.reads = 1;
            recorded.share = share;
            return share.holding;
        }
        LocalLock holding;
        if (mode == LockType.WRITE) {
            shares.writerIn(key);
            shares.close(key, null); // a writer of this client is about to wait: no new reader joins
            boolean acquired = false;
            try {
                // a reader of this client may have opened a share since the last attempt
                holding = redis.acquire(key, mode, wait, lease, interruptible, downgradingWriter,
                        () -> shares.close(key, null));
                acquired = holding != null;
            } finally {
                if (!acquired) {
                    shares.writerOut(key);
                }
            }
        } else {
            holding = redis.acquire(key, mode, wait, lease, interruptible, downgradingWriter, () -> { });
        }
        if (holding == null) {
            return null;
        }
        Holds recorded = holds.get().computeIfAbsent(key, k -> new Holds());
        if (mode == LockType.READ) {
            recorded.read = holding;
            recorded.reads = 1;
        } else {
            recorded.write = holding;
            recorded.writes = 1;
        }
        watchdog.watch(holding, mode == LockType.READ ? shares.renewer() : writeRenewer);
        return holding;
    }

    private static LocalLock reenter(LocalLock holding, Runnable count) {
        checkValid(holding);
        count.run();
        return holding;
    }

    private static void checkValid(LocalLock holding) {
        String invalid = holding.invalidReason();
        if (invalid != null) {
            throw new LockLostException(holding.key, holding.token, invalid);
        }
    }

    /**
     * Releases one hold of the current thread on one side of the lock.
     *
     * @throws IllegalMonitorStateException when the thread does not hold that side
     * @throws LockLostException when the holding had been lost before this release
     */
    void release(String key, LockType mode) {
        Map<String, Holds> all = holds.get();
        Holds mine = all.get(key);
        int count = mine == null ? 0 : mode == LockType.READ ? mine.reads : mine.writes;
        if (count == 0) {
            throw new IllegalMonitorStateException("The " + mode.name().toLowerCase() + " lock of '" + key
                    + "' is not held by thread '" + Thread.currentThread().getName()
                    + "'; only the thread that acquired it may release it");
        }
        LocalLock holding;
        ReadShare share = null;
        if (mode == LockType.READ) {
            holding = mine.read;
            if (--mine.reads > 0) {
                return;
            }
            mine.read = null;
            share = mine.share;
            mine.share = null;
        } else {
            holding = mine.write;
            if (--mine.writes > 0) {
                return;
            }
            mine.write = null;
        }
        if (mine.reads == 0 && mine.writes == 0) {
            all.remove(key);
        }
        long token = holding.token;
        String invalid = holding.invalidReason();
        if (share != null && !share.leave()) {
            // other threads of this client still read in the share: it stays in Redis for them
            if (invalid != null) {
                throw new LockLostException(key, token, invalid);
            }
            return;
        }
        if (share != null) {
            shares.remove(key, share);
        }
        String owner = holding.releasing();
        watchdog.unwatch(holding);
        boolean wasOwner = redis.release(key, owner, mode);
        if (mode == LockType.WRITE) {
            shares.writerOut(key); // after the release in Redis: a share opened now finds the lock free
        }
        if (invalid != null) {
            throw new LockLostException(key, token, invalid);
        }
        if (!wasOwner) {
            throw new LockLostException(key, token, "Redis no longer had it as this owner's at release");
        }
    }

    /** One acquisition of one side, handed to the caller. */
    private final class Handle extends ThreadBoundHandle implements LockActivity.Leased {

        private final String key;
        private final LockType mode;
        private final LocalLock holding;
        private final long token;

        Handle(String key, LockType mode, LocalLock holding) {
            this.key = key;
            this.mode = mode;
            this.holding = holding;
            this.token = holding.token;
        }

        @Override
        public LocalLock lease() {
            return holding;
        }

        @Override
        public String key() {
            return key;
        }

        /** For a writer, its own token; for a reader, its read epoch's (see {@link ReadWriteLocks}). */
        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public boolean isHeld() {
            return !released() && holding.isValid();
        }

        @Override
        String subject() {
            return "The " + mode.name().toLowerCase() + " lock of '" + key + "'";
        }

        @Override
        void releaseHold() {
            ReadWriteLocks.this.release(key, mode);
        }

        @Override
        public String toString() {
            return "LockHandle[" + key + ", " + mode + ", token " + token + (isHeld() ? ", held]" : ", not held]");
        }
    }
}
