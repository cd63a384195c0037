package io.github.redislock.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
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
 * <b>One read share per JVM.</b> The first reading thread of this client takes a read share in Redis (a reader entry
 * with its own lease, renewed by the watchdog); further reading threads join that share in memory, counted in its
 * {@link ReadShare}, while it is held and no writer waits, and the last one to leave releases it in Redis. So a JVM
 * that crashes frees only its own share when that lease ends, and the other JVMs read on. A writer that waits stops
 * threads joining: a writer of this client closes the share at each of its attempts; a writer of another client
 * publishes a notice to the clients that read when it starts waiting, and if that message is lost, the share's next
 * renewal reports the waiting writer (so threads may join for at most a renewal interval, a third to half of the
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
 */
final class ReadWriteLocks {

    private static final Logger log = LoggerFactory.getLogger(ReadWriteLocks.class);

    /** What rw-read-renew-many.lua answers for a share it renewed while a writer waits. */
    private static final char WRITER_WAITS = '2';

    /** Starts the notice that a writer waits for a key: a control character, which no valid lock key contains. */
    private static final String WRITER_WAITS_PREFIX = "\u0003rw-writer-waits:";

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
    /** This client's newest read share of each key it reads, joinable or not. */
    private final ConcurrentHashMap<String, ReadShare> shares = new ConcurrentHashMap<>();
    /** How many threads of this client wait for or hold the write lock of each key (absent: none). */
    private final ConcurrentHashMap<String, Integer> writers = new ConcurrentHashMap<>();
    private final Renewer shareRenewer;

    ReadWriteLocks(LockScripts scripts, WaitLoop waitLoop, Watchdog watchdog, BackgroundCleanup cleanup, String clientId,
            Duration watchdogLease) {
        this.scripts = scripts;
        this.waitLoop = waitLoop;
        this.watchdog = watchdog;
        Renewer.Many renewShares = scripts.renewManyReadShares();
        // a renewal of a read share also says whether a writer waits, in case the writer's notice was lost
        Renewer.Many renewReads = new Renewer.Many() {
            @Override
            public Renewer.Replies renew(List<String> keys, List<String> owners, long[] leaseMillis) {
                Renewer.Replies replies = renewShares.renew(keys, owners, leaseMillis);
                String outcomes = replies.outcomes();
                if (outcomes.indexOf(WRITER_WAITS) < 0) {
                    return replies;
                }
                for (int i = 0; i < outcomes.length(); i++) {
                    if (outcomes.charAt(i) == WRITER_WAITS) {
                        closeShare(keys.get(i), owners.get(i));
                    }
                }
                return new Renewer.Replies(outcomes.replace(WRITER_WAITS, Renewer.Replies.RENEWED), replies.failure());
            }

            @Override
            public String nodeOf(String key) {
                return renewShares.nodeOf(key);
            }

            @Override
            public int batchOf(String key) {
                return renewShares.batchOf(key);
            }
        };
        Renewer.Call renewRead = (key, owner, leaseMillis) -> {
            long renewal = scripts.readWriteRenewal(key, owner, false, leaseMillis);
            if (renewal == 2) {
                closeShare(key, owner);
            }
            return renewal >= 1;
        };
        this.readRenewer = new Renewer(Kind.READ, renewRead, renewReads);
        this.shareRenewer = this.readRenewer;
        this.writeRenewer = new Renewer(Kind.WRITE, (key, owner, leaseMillis) -> scripts.readWriteRenew(key, owner, true, leaseMillis),
                scripts.renewManyWriteLocks());
        this.cleanup = cleanup;
        this.clientId = clientId;
        this.watchdogLease = watchdogLease;
    }

    /**
     * One thread's holds on one key: each side's Redis holding (a {@link LocalLock} used as its record) and count,
     * and the read share the read side joined (or {@code null} when the thread has its own reader entry).
     */
    private static final class Holds {
        LocalLock read;
        int reads;
        ReadShare share;
        LocalLock write;
        int writes;
    }

    /**
     * This client's read share of one key: one reader entry in Redis (its {@link #holding}: owner, epoch token,
     * lease) held for the reading threads that joined it. Closed, it takes no new readers: a writer waits, or its
     * last reader left.
     */
    private static final class ReadShare {

        final LocalLock holding;
        private final ReentrantLock lock = new ReentrantLock();
        private int readers = 1;
        private boolean closed;

        ReadShare(LocalLock holding) {
            this.holding = holding;
        }

        /** Counts one more reader in, if it is open and still held. */
        boolean join() {
            lock.lock();
            try {
                if (closed || !holding.isValid()) {
                    return false;
                }
                readers++;
                return true;
            } finally {
                lock.unlock();
            }
        }

        /** Counts one reader out; returns whether it was the last (the share is then closed for good). */
        boolean leave() {
            lock.lock();
            try {
                if (--readers > 0) {
                    return false;
                }
                closed = true;
                return true;
            } finally {
                lock.unlock();
            }
        }

        void close() {
            lock.lock();
            try {
                closed = true;
            } finally {
                lock.unlock();
            }
        }

        boolean isOpen() {
            lock.lock();
            try {
                return !closed;
            } finally {
                lock.unlock();
            }
        }

        int readers() {
            lock.lock();
            try {
                return readers;
            } finally {
                lock.unlock();
            }
        }
    }

    /** The message telling a client that a writer waits for {@code key}. */
    static String writerWaits(String key) {
        return WRITER_WAITS_PREFIX + key;
    }

    /**
     * A release of {@code key} was published to this client: its threads waiting for the key look again. Or a
     * writer waits for a key: this client's threads stop joining its read share.
     */
    void wake(String key) {
        if (key.startsWith(WRITER_WAITS_PREFIX)) {
            closeShare(key.substring(WRITER_WAITS_PREFIX.length()), null);
            return;
        }
        waiting.wake(key);
    }

    /** No more threads join this client's read share of {@code key} (only the one of {@code owner}, if given). */
    private void closeShare(String key, String owner) {
        ReadShare share = shares.get(key);
        if (share != null && (owner == null || owner.equals(share.holding.owner))) {
            share.close();
        }
    }

    /** This client's read share of {@code key} and the readers in it (for tests); {@code 0} when it has none open. */
    int shareReaders(String key) {
        ReadShare share = shares.get(key);
        return share == null || !share.isOpen() ? 0 : share.readers();
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
        if (mode == LockMode.READ && lease == null && downgradingWriter.isEmpty()) {
            ReadShare share = readShare(key, wait, interruptible);
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
        if (mode == LockMode.WRITE) {
            writerIn(key);
            closeShare(key, null); // a writer of this client is about to wait: no new reader joins
            boolean acquired = false;
            try {
                holding = acquireInRedis(key, mode, wait, lease, interruptible, downgradingWriter);
                acquired = holding != null;
            } finally {
                if (!acquired) {
                    writerOut(key);
                }
            }
        } else {
            holding = acquireInRedis(key, mode, wait, lease, interruptible, downgradingWriter);
        }
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

    /**
     * Joins this client's read share of {@code key}, or opens one in Redis when there is none open (one thread at a
     * time; the others wait for it, then join).
     *
     * @return the share joined, counting the current thread in; {@code null} on timeout
     */
    private ReadShare readShare(String key, Duration wait, boolean interruptible) throws InterruptedException {
        ReadShare share = join(key);
        if (share != null) {
            return share;
        }
        Deadline deadline = Deadline.startingNow(wait);
        LocalLock wakePoint = waiting.retain(key);
        try {
            if (!lockOpening(wakePoint.mutex, deadline, interruptible)) {
                return null;
            }
            try {
                share = join(key); // opened meanwhile by the thread before this one
                if (share != null) {
                    return share;
                }
                if (awaitLocalWriters(key, wakePoint, deadline, interruptible)) {
                    return null;
                }
                String owner = clientId + ":share:" + acquisitions.incrementAndGet();
                LocalLock holding = awaitInRedis(key, LockMode.READ, deadline, null, interruptible, "", owner, wakePoint);
                if (holding == null) {
                    return null;
                }
                share = new ReadShare(holding);
                watchdog.watch(holding, shareRenewer);
                shares.put(key, share);
                waitLoop.listen(); // a waiting writer's notice reaches this client only once it is subscribed
                return share;
            } finally {
                wakePoint.mutex.unlock();
            }
        } finally {
            waiting.unretain(wakePoint);
        }
    }

    /** Counts a thread of this client in as waiting for or holding the write lock of {@code key}. */
    private void writerIn(String key) {
        writers.merge(key, 1, Integer::sum);
    }

    /** Counts it out; the last one out wakes a thread waiting to open a read share. */
    private void writerOut(String key) {
        if (writers.computeIfPresent(key, (k, count) -> count > 1 ? count - 1 : null) == null) {
            waiting.wake(key);
        }
    }

    /**
     * Waits while threads of this client wait for or hold the write lock: a share opened now would only wait in
     * Redis behind them (this client's waiting writers keep new readers out as anyone's do).
     *
     * @return whether the deadline passed first
     */
    private boolean awaitLocalWriters(String key, LocalLock wakePoint, Deadline deadline, boolean interruptible)
            throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                long seen = wakePoint.wakeups();
                if (!writers.containsKey(key)) {
                    return false;
                }
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    return true;
                }
                // bounded, in case a wake-up is missed: the writer's own release in Redis wakes too
                long millis = Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 100));
                interrupted |= wakePoint.awaitWake(seen, millis, interruptible);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private ReadShare join(String key) {
        ReadShare share = shares.get(key);
        return share != null && share.join() ? share : null;
    }

    /** Takes the turn to open a read share; an interrupt ends the wait only when {@code interruptible}. */
    private static boolean lockOpening(ReentrantLock mutex, Deadline deadline, boolean interruptible)
            throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (deadline.isForever()) {
                        if (interruptible) {
                            mutex.lockInterruptibly();
                        } else {
                            mutex.lock();
                        }
                        return true;
                    }
                    return mutex.tryLock(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private LocalLock acquireInRedis(String key, LockMode mode, Duration wait, Duration lease, boolean interruptible,
            String downgradingWriter) throws InterruptedException {
        Deadline deadline = Deadline.startingNow(wait);
        // a new owner id per acquisition, as the exclusive lock: the clean-up of an earlier attempt never
        // releases a later one
        String owner = clientId + ":" + Thread.currentThread().getId() + ":" + acquisitions.incrementAndGet();
        LocalLock wakePoint = waiting.retain(key);
        try {
            return awaitInRedis(key, mode, deadline, lease, interruptible, downgradingWriter, owner, wakePoint);
        } finally {
            waiting.unretain(wakePoint);
        }
    }

    private LocalLock awaitInRedis(String key, LockMode mode, Deadline deadline, Duration lease, boolean interruptible,
            String downgradingWriter, String owner, LocalLock wakePoint) throws InterruptedException {
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        LocalLock holding = new LocalLock(key);
        boolean interrupted = waitLoop.await(wakePoint, deadline, interruptible, (sleepMillis, registered) -> {
            long requestStart = System.nanoTime();
            if (mode == LockMode.WRITE) {
                closeShare(key, null); // a reader of this client may have opened a share since the last attempt
            }
            AcquireReply reply = mode == LockMode.READ
                    ? scripts.readAcquire(key, owner, leaseMillis, sleepMillis, downgradingWriter)
                    : scripts.writeAcquire(key, owner, leaseMillis, sleepMillis);
            if (reply.acquired()) {
                holding.held(owner, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart,
                        lease == null);
            }
            return reply;
        }, (registered, uncertain) -> giveUp(key, mode, owner, registered, uncertain));
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
        ReadShare share = null;
        if (mode == LockMode.READ) {
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
        if (mode == LockMode.WRITE) {
            writerOut(key); // after the release in Redis: a share opened now finds the lock free
        }
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
