package io.github.redislock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.github.redislock.core.WaitLoop.Deadline;
import org.jspecify.annotations.Nullable;

/**
 * The read share bookkeeping of {@link ReadWriteLocks}: this client's newest {@link ReadShare} of each key, how a
 * reading thread joins one or opens one in Redis (one thread of this client at a time), and what closes a share to
 * new readers: a writer of this client (counted here while it waits or holds, and no share opens meanwhile), the
 * notice of another client's waiting writer, or a renewal of the share that reports a waiting writer (in case that
 * notice was lost). Renews the read side's Redis holdings for the {@link Watchdog}.
 */
final class ReadShares {

    /** What rw-read-renew-many.lua answers for a share it renewed while a writer waits. */
    private static final char WRITER_WAITS = '2';

    /** Starts the notice that a writer waits for a key: a control character, which no valid lock key contains. */
    private static final String WRITER_WAITS_PREFIX = "\u0003rw-writer-waits:";

    private final ReadWriteRedis redis;
    /** Where the threads of this client waiting for a key sleep; woken when a release of the key is published. */
    private final LocalLocks waiting;
    private final WaitLoop waitLoop;
    private final Watchdog watchdog;
    private final Renewer renewer;
    /** This client's newest read share of each key it reads, joinable or not. */
    private final ConcurrentHashMap<String, ReadShare> shares = new ConcurrentHashMap<>();
    /** How many threads of this client wait for or hold the write lock of each key (absent: none). */
    private final ConcurrentHashMap<String, Integer> writers = new ConcurrentHashMap<>();

    ReadShares(LockScripts scripts, ReadWriteRedis redis, LocalLocks waiting, WaitLoop waitLoop, Watchdog watchdog) {
        this.redis = redis;
        this.waiting = waiting;
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
                        close(keys.get(i), owners.get(i));
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
                close(key, owner);
            }
            return renewal >= 1;
        };
        this.renewer = new Renewer(LockType.READ, renewRead, renewReads);
    }

    /** Renews the read side's holdings, shares or not, and closes a share whose renewal reports a waiting writer. */
    Renewer renewer() {
        return renewer;
    }

    /** The message telling a client that a writer waits for {@code key}. */
    static String writerWaits(String key) {
        return WRITER_WAITS_PREFIX + key;
    }

    /**
     * If {@code message} is the notice that a writer waits for a key, this client's threads stop joining its read
     * share of that key.
     *
     * @return whether it was such a notice
     */
    boolean closeOnNotice(String message) {
        if (!message.startsWith(WRITER_WAITS_PREFIX)) {
            return false;
        }
        close(message.substring(WRITER_WAITS_PREFIX.length()), null);
        return true;
    }

    /** No more threads join this client's read share of {@code key} (only the one of {@code owner}, if given). */
    void close(String key, @Nullable String owner) {
        ReadShare share = shares.get(key);
        if (share != null && (owner == null || owner.equals(share.holding.owner))) {
            share.close();
        }
    }

    /** Forgets {@code share}, whose last reader left. */
    void remove(String key, ReadShare share) {
        shares.remove(key, share);
    }

    /** This client's read share of {@code key} and the readers in it (for tests); {@code 0} when it has none open. */
    int readers(String key) {
        ReadShare share = shares.get(key);
        return share == null || !share.isOpen() ? 0 : share.readers();
    }

    /**
     * Joins this client's read share of {@code key}, or opens one in Redis when there is none open (one thread at a
     * time; the others wait for it, then join).
     *
     * @return the share joined, counting the current thread in; {@code null} on timeout
     */
    @Nullable ReadShare joinOrOpen(String key, Duration wait, boolean interruptible) throws InterruptedException {
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
                LocalLock holding = redis.openShare(key, deadline, interruptible, wakePoint);
                if (holding == null) {
                    return null;
                }
                share = new ReadShare(holding);
                watchdog.watch(holding, renewer);
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
    void writerIn(String key) {
        writers.merge(key, 1, Integer::sum);
    }

    /** Counts it out; the last one out wakes a thread waiting to open a read share. */
    void writerOut(String key) {
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

    private @Nullable ReadShare join(String key) {
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
}
