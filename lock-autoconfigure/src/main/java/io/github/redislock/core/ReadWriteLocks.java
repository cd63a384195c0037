package io.github.redislock.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.RedisLockDiagnostics.Kind;
import io.github.redislock.core.WaitLoop.Deadline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;

/**
 * The read/write lock type: many readers or one writer, across threads and JVMs.
 * <p>
 * Every thread is its own owner in Redis, with its own lease: a reader that crashes frees only its own share when
 * that lease ends, and the other readers read on. (The exclusive lock queues a JVM's threads in memory instead;
 * readers must not queue behind each other, so here each thread goes to Redis once per outermost acquisition.)
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
 * their read epoch (drawn when the first reader entered after no one read, and shared by the readers joining it),
 * so a write after those reads carries a greater token than they did.</li>
 * </ul>
 * Each Redis holding is watched by the {@link Watchdog} from acquisition to release, which renews those without an
 * explicit lease time as it renews every lock type's, and marks one it finds gone lost and tells the
 * {@link LockLostListener}s.
 */
final class ReadWriteLocks {

    private static final Logger log = LoggerFactory.getLogger(ReadWriteLocks.class);

    private final LockScripts scripts;
    /** Where the threads of this client waiting for a key sleep; woken when a release of the key is published. */
    private final LocalLocks waiting = new LocalLocks();
    private final WaitLoop waitLoop;
    private final Watchdog watchdog;
    private final Renewer readRenewer;
    private final Renewer writeRenewer;
    private final BackgroundCleanup cleanup;
    private final String clientId;
    private final Duration watchdogLease;
    private final AtomicLong acquisitions = new AtomicLong();
    /** The current thread's holds, by key. */
    private final ThreadLocal<Map<String, Holds>> holds = ThreadLocal.withInitial(HashMap::new);

    ReadWriteLocks(LockScripts scripts, WaitLoop waitLoop, Watchdog watchdog, BackgroundCleanup cleanup, String clientId,
            Duration watchdogLease) {
        this.scripts = scripts;
        this.waitLoop = waitLoop;
        this.watchdog = watchdog;
        this.readRenewer = new Renewer(Kind.READ, (key, owner, leaseMillis) -> scripts.readWriteRenew(key, owner, false, leaseMillis),
                scripts.renewManyReadShares());
        this.writeRenewer = new Renewer(Kind.WRITE, (key, owner, leaseMillis) -> scripts.readWriteRenew(key, owner, true, leaseMillis),
                scripts.renewManyWriteLocks());
        this.cleanup = cleanup;
        this.clientId = clientId;
        this.watchdogLease = watchdogLease;
    }

    /** One thread's holds on one key: each side's Redis holding (a {@link LocalLock} used as its record) and count. */
    private static final class Holds {
        LocalLock read;
        int reads;
        LocalLock write;
        int writes;
    }

    /** A release of {@code key} was published to this client: its threads waiting for the key look again. */
    void wake(String key) {
        waiting.wake(key);
    }

    /** Releases may have been missed: every waiting thread looks again. */
    void wakeAll() {
        waiting.wakeAll();
    }

    /** The keys threads of this client wait for, on either side. */
    Stream<String> waitingKeys() {
        return waiting.keys();
    }

    /**
     * The template API's acquisition: an interrupt while waiting ends the wait with
     * {@link LockNotAcquiredException} and leaves the thread's interrupt flag set.
     */
    Optional<LockHandle> tryAcquire(String key, LockMode mode, Duration wait, Duration lease) {
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
    LocalLock lock(String key, LockMode mode, Duration wait, Duration lease, boolean interruptible)
            throws InterruptedException {
        Holds mine = holds.get().get(key);
        if (mine != null) {
            if (mode == LockMode.WRITE && mine.writes > 0) {
                return reenter(mine.write, () -> mine.writes++);
            }
            if (mode == LockMode.READ && mine.reads > 0) {
                return reenter(mine.read, () -> mine.reads++);
            }
            if (mode == LockMode.WRITE) {
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
        LocalLock holding = acquireInRedis(key, mode, wait, lease, interruptible, downgradingWriter);
        if (holding == null) {
            return null;
        }
        Holds recorded = holds.get().computeIfAbsent(key, k -> new Holds());
        if (mode == LockMode.READ) {
            recorded.read = holding;
            recorded.reads = 1;
        } else {
            recorded.write = holding;
            recorded.writes = 1;
        }
        watchdog.watch(holding, mode == LockMode.READ ? readRenewer : writeRenewer);
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

    private LocalLock acquireInRedis(String key, LockMode mode, Duration wait, Duration lease, boolean interruptible,
            String downgradingWriter) throws InterruptedException {
        Deadline deadline = Deadline.startingNow(wait);
        // a new owner id per acquisition, as the exclusive lock: the clean-up of an earlier attempt never
        // releases a later one
        String owner = clientId + ":" + Thread.currentThread().getId() + ":" + acquisitions.incrementAndGet();
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        LocalLock holding = new LocalLock(key);
        LocalLock wakePoint = waiting.retain(key);
        boolean interrupted;
        try {
            interrupted = waitLoop.await(wakePoint, deadline, interruptible, (sleepMillis, registered) -> {
                long requestStart = System.nanoTime();
                AcquireReply reply = mode == LockMode.READ
                        ? scripts.readAcquire(key, owner, leaseMillis, sleepMillis, downgradingWriter)
                        : scripts.writeAcquire(key, owner, leaseMillis, sleepMillis);
                if (reply.acquired()) {
                    holding.held(owner, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart,
                            lease == null);
                }
                return reply;
            }, (registered, uncertain) -> giveUp(key, mode, owner, registered, uncertain));
        } finally {
            waiting.unretain(wakePoint);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return holding.owner != null ? holding : null;
    }

    /**
     * Leaves nothing behind after a failed wait: a writer's waiting entry (so the readers it held back enter now),
     * and a holding whose grant reply was lost. A client's waiting entry is left to expire: another thread of this
     * client may still wait on it.
     */
    private void giveUp(String key, LockMode mode, String owner, boolean registered, boolean uncertain) {
        if (uncertain) {
            cleanup.run(() -> {
                scripts.readWriteRelease(key, owner, mode == LockMode.WRITE);
                if (mode == LockMode.WRITE) {
                    scripts.leaveAsWriter(key, owner);
                }
            });
            return;
        }
        if (registered && mode == LockMode.WRITE) {
            BackgroundCleanup.withoutInterrupt(() -> {
                try {
                    scripts.leaveAsWriter(key, owner);
                } catch (RuntimeException e) {
                    log.debug("Could not withdraw a waiting writer of lock '{}'; its entry expires", key, e);
                    cleanup.run(() -> scripts.leaveAsWriter(key, owner));
                }
            });
        }
    }

    /**
     * Releases one hold of the current thread on one side of the lock.
     *
     * @throws IllegalMonitorStateException when the thread does not hold that side
     * @throws LockLostException when the holding had been lost before this release
     */
    void release(String key, LockMode mode) {
        Map<String, Holds> all = holds.get();
        Holds mine = all.get(key);
        int count = mine == null ? 0 : mode == LockMode.READ ? mine.reads : mine.writes;
        if (count == 0) {
            throw new IllegalMonitorStateException("The " + mode.name().toLowerCase() + " lock of '" + key
                    + "' is not held by thread '" + Thread.currentThread().getName()
                    + "'; only the thread that acquired it may release it");
        }
        LocalLock holding;
        if (mode == LockMode.READ) {
            holding = mine.read;
            if (--mine.reads > 0) {
                return;
            }
            mine.read = null;
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
        String owner = holding.releasing();
        watchdog.unwatch(holding);
        boolean[] wasOwner = {true};
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                wasOwner[0] = scripts.readWriteRelease(key, owner, mode == LockMode.WRITE);
            } catch (DataAccessException e) {
                log.warn("Could not release the {} lock of '{}' in Redis ({}); retrying in the background, and its lease "
                        + "ends it at the latest", mode.name().toLowerCase(), key, e.toString());
                cleanup.run(() -> scripts.readWriteRelease(key, owner, mode == LockMode.WRITE));
            }
        });
        if (invalid != null) {
            throw new LockLostException(key, token, invalid);
        }
        if (!wasOwner[0]) {
            throw new LockLostException(key, token, "Redis no longer had it as this owner's at release");
        }
    }

    /** One acquisition of one side, handed to the caller. */
    private final class Handle extends ThreadBoundHandle implements LockActivity.Leased {

        private final String key;
        private final LockMode mode;
        private final LocalLock holding;
        private final long token;

        Handle(String key, LockMode mode, LocalLock holding) {
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
