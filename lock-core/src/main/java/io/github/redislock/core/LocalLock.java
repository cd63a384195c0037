package io.github.redislock.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-JVM side of one key: threads of this JVM queue on {@link #mutex}, so Redis sees one
 * contender per JVM, and reentrant acquisitions never reach Redis. It also remembers the Redis
 * holding of the thread that owns the mutex.
 */
final class LocalLock {

    final String key;
    final ReentrantLock mutex = new ReentrantLock(true);

    /** Threads holding or waiting for this key; guarded by the template's map, which drops it at zero. */
    int users;

    /**
     * One Redis holding: its owner id, fencing token and lease, and whether the watchdog renews it.
     * Immutable and replaced as a whole, so the watchdog renews, extends or marks lost exactly the
     * holding it read, never a later one with the same owner (a hand-over adopted with another lease). A pass in
     * memory ({@link #passInMemory()}) keeps it: the Redis lock is the same, only the local holder and {@link #token}
     * change, so a loss of it is a loss for whichever thread holds it then. Holdings are told apart by identity: two
     * of them can carry the same fields (two keys granted the same fencing token to this client by message have the
     * same owner id).
     */
    record Holding(String owner, long token, long leaseNanos, boolean renewing) {
    }

    /** The allowance for clock drift that the local view of a lease ends before Redis's can: 1% plus 2ms. */
    private static final long MIN_DRIFT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    // The Redis holding: written by the holder thread and, for the holding it read, the watchdog; the
    // writes are synchronized so the watchdog never marks or extends a later holding than the one it renewed.
    /** The current holding, {@code null} once released. */
    volatile Holding holding;
    /** The current holding's owner ({@code null} once released), for the acquire and release paths. */
    volatile String owner;
    /**
     * The last holder's token (after a pass in memory, a reserved one, not the holding's); kept after the release, so
     * a handle can tell its own holding.
     */
    volatile long token;
    /** When the request that last set the holding's lease in Redis was sent. */
    private volatile long renewedAtNanos;
    /** When the local view of the holding ends: its lease from {@link #renewedAtNanos}, less the safety margin. */
    private volatile long validUntilNanos;
    volatile String lostReason;
    /**
     * When the watchdog's renewal in flight for the current holding was sent, {@link #NO_RENEWAL} when none: at most one
     * per holding. Written under this lock's monitor, read without it; every new {@link #holding} starts with none, so
     * the renewal of an earlier holding is forgotten (its answer changes nothing). A number, not an object: the
     * watchdog marks and clears it at every renewal of every held lock, and a new object stored into a long-lived lock
     * costs the garbage collector a remembered-set update each time (G1's refinement threads spent about as much CPU
     * on those as the watchdog's look with 100,000 held locks).
     */
    private volatile long renewalSentNanos = NO_RENEWAL;
    private static final long NO_RENEWAL = Long.MIN_VALUE;
    /**
     * Whether the last holder handed the Redis lock to whichever thread takes {@link #mutex} next: the
     * holding above then belongs to that thread, which adopts it without a round trip.
     */
    volatile boolean handedOver;

    /**
     * The waiter's grant its client was told of by the release that made it, {@code null} until then (the fair lock's
     * hand-over to this waiter; the exclusive lock's grant to this client). Written by the subscription's thread, taken
     * by the waiting thread.
     */
    volatile Grant grant;

    /**
     * Fencing tokens the last Redis hand-over reserved for this JVM: the next one to hand out and the last, and until
     * when (a {@link System#nanoTime()}) the holder may pass the lock to the next local thread in memory with one of
     * them; guarded by {@link #mutex}.
     */
    private long nextReservedToken;
    private long lastReservedToken;
    private long reservedUntilNanos;

    /**
     * Clean-up a thread that gave up left for after it has left this key's queue (a request whose reply was lost
     * may have taken the lock or registered a waiter); guarded by {@link #mutex}.
     */
    Runnable undoAfterGivingUp;

    /**
     * Whether this JVM's waiter entry for the key was kept in Redis by a thread that gave up while other threads of
     * the JVM still queued for the key: the next of them waits on in its place, and the last to leave withdraws it.
     */
    final AtomicBoolean waiterEntryKept = new AtomicBoolean();

    /**
     * {@link #wakeups()} before the last release that registered this JVM in Redis as waiting behind the clients it
     * woke (-1: none since it was taken), and when that release was sent; guarded by {@link #mutex}. See
     * {@link #asleepAfterRelease(long)}.
     */
    private long registeredAtWakeups = -1;
    private long registeredAtNanos;
    /** The server time that release ran at, as a miss tells it ({@link LockScripts.AcquireReply#missedAt()}); -1 if unknown. */
    private long registeredAtServer = -1;

    /**
     * The exclusive lock's waiting thread's latest request that found the lock not its own: when it was sent (0: none
     * yet), and when it ran by the server's clock (ms modulo {@link LockScripts#GRANT_CLOCK_MODULUS}); guarded by
     * {@link #mutex}. A grant's message proves it is newer than that miss (else the grant was over by then), and it then
     * ran in Redis after the request was sent.
     */
    long lastMissSentNanos;
    long lastMissAt;

    /** Release notices seen for this key; guarded by {@link #wakeLock} for writes, read without it. */
    private volatile long wakeups;
    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition woken = wakeLock.newCondition();

    LocalLock(String key) {
        this.key = key;
    }

    /**
     * How long before its lease ends in Redis a holding counts as ended here: 1% of the lease plus
     * 2ms (at most half the lease). Redis times a TTL by its own clock from when the command ran, which
     * is after the request was sent, so this covers the two clocks running at different rates (drift
     * is parts per million; 1% covers much more); a clock step on the Redis host it cannot cover.
     */
    static long safetyMarginNanos(long leaseNanos) {
        return Math.min(leaseNanos / 2, leaseNanos / 100 + MIN_DRIFT_NANOS);
    }

    synchronized void held(String owner, long token, long leaseNanos, long requestStartNanos, boolean renewing) {
        this.registeredAtWakeups = -1; // a registration for a thread that did not take the lock after all
        this.reservedUntilNanos = 0;
        this.nextReservedToken = 0;
        this.lastReservedToken = 0;
        this.renewedAtNanos = requestStartNanos;
        this.validUntilNanos = requestStartNanos + leaseNanos - safetyMarginNanos(leaseNanos);
        this.lostReason = null;
        this.owner = owner;
        this.token = token;
        this.renewalSentNanos = NO_RENEWAL;
        this.holding = new Holding(owner, token, leaseNanos, renewing);
    }

    /**
     * Gives {@code current}, if it is still this key's holding and not lost, the fixed lease a request sent at
     * {@code requestStartNanos} set ({@link ExclusiveLock#extend}).
     *
     * @return whether it was still the holding
     */
    synchronized boolean leaseSet(Holding current, long leaseNanos, long requestStartNanos) {
        if (holding != current || lostReason != null) {
            return false;
        }
        this.renewedAtNanos = requestStartNanos;
        this.validUntilNanos = requestStartNanos + leaseNanos - safetyMarginNanos(leaseNanos);
        this.renewalSentNanos = NO_RENEWAL;
        this.holding = new Holding(current.owner(), current.token(), leaseNanos, false);
        return true;
    }

    /**
     * Records the fencing tokens {@code first} to {@code last} as reserved for this JVM's next holders of the current
     * holding until {@code untilNanos}; the holder holds {@link #mutex}.
     */
    void reserveTokens(long first, long last, long untilNanos) {
        this.nextReservedToken = first;
        this.lastReservedToken = last;
        this.reservedUntilNanos = untilNanos;
    }

    /**
     * Passes the current holding to whichever thread takes {@link #mutex} next, with the next reserved fencing token,
     * without asking Redis: the holding must be renewed by the watchdog, still valid, and reserved tokens left within
     * their window. The holder holds {@link #mutex}.
     *
     * @return whether it was passed on; if not, the release goes through Redis
     */
    synchronized boolean passInMemory() {
        Holding current = holding;
        if (current == null || !current.renewing() || nextReservedToken == 0 || nextReservedToken > lastReservedToken
                || System.nanoTime() - reservedUntilNanos >= 0 || invalidReason() != null) {
            return false;
        }
        token = nextReservedToken++;
        handedOver = true;
        return true;
    }

    /**
     * Records that the holder's release, sent at {@code requestStartNanos} when this key had seen {@code wakeups}
     * release notices, registered this JVM as waiting (for the next thread in {@link #mutex}'s queue); the holder
     * holds {@link #mutex}. The JVM's entry is kept for that thread, and withdrawn if every queued thread gives up.
     */
    void registeredByRelease(long wakeups, long requestStartNanos, long serverTime) {
        waiterEntryKept.set(true);
        registeredAtWakeups = wakeups;
        registeredAtNanos = requestStartNanos;
        registeredAtServer = serverTime;
    }

    /** Records the waiting thread's latest miss (see {@link #lastMissSentNanos}); the thread holds {@link #mutex}. */
    void missed(long sentNanos, long serverTime) {
        lastMissSentNanos = sentNanos;
        lastMissAt = serverTime;
    }

    /** When the last release that registered this JVM as waiting was sent ({@link #registeredByRelease}). */
    long registeredAtNanos() {
        return registeredAtNanos;
    }

    /** When that release ran, by the server's clock as a miss tells it; -1 if unknown. */
    long registeredAtServer() {
        return registeredAtServer;
    }

    /**
     * Whether the thread that took {@link #mutex} may sleep before it asks Redis for the lock: the last release
     * registered this JVM as waiting less than {@code withinNanos} ago (its entry lives longer) and no release notice
     * came since, so Redis would only tell it to wait. Answers once per registration.
     */
    boolean asleepAfterRelease(long withinNanos) {
        long at = registeredAtWakeups;
        registeredAtWakeups = -1;
        return at >= 0 && at == wakeups && System.nanoTime() - registeredAtNanos < withinNanos;
    }

    /** Ends the holding locally (the holder is releasing it); returns its owner. */
    synchronized String releasing() {
        String releasedOwner = owner;
        reservedUntilNanos = 0;
        nextReservedToken = 0;
        renewalSentNanos = NO_RENEWAL;
        holding = null;
        owner = null;
        return releasedOwner;
    }

    /**
     * Replaces {@code granted} (a fair hand-over taken from its message) with the holding its confirmation set in
     * Redis, if it is still this key's holding and not lost.
     */
    synchronized void confirmed(Holding granted, long leaseNanos, long requestStartNanos, boolean renewing) {
        if (holding == granted && lostReason == null) {
            renewedAtNanos = requestStartNanos;
            validUntilNanos = requestStartNanos + leaseNanos - safetyMarginNanos(leaseNanos);
            renewalSentNanos = NO_RENEWAL;
            holding = new Holding(granted.owner(), granted.token(), leaseNanos, renewing);
        }
    }

    /**
     * Records a renewal of {@code renewed} sent at {@code requestStartNanos}, if it is still this key's holding and its
     * lease (less the margin) has not run out meanwhile: a holding seen as no longer held never comes back.
     *
     * @return whether the holding is still valid (renewed now, or by a later renewal already)
     */
    synchronized boolean renewed(Holding renewed, long requestStartNanos) {
        if (holding != renewed || lostReason != null || System.nanoTime() - validUntilNanos >= 0) {
            return false;
        }
        if (requestStartNanos - renewedAtNanos > 0) {
            renewedAtNanos = requestStartNanos;
            validUntilNanos = requestStartNanos + renewed.leaseNanos() - safetyMarginNanos(renewed.leaseNanos());
        }
        return true;
    }

    /** How long the current holding's lease has left in Redis as this JVM counts it (negative once run out). */
    long leaseLeftNanos() {
        Holding current = holding;
        return current == null ? 0 : renewedAtNanos + current.leaseNanos() - System.nanoTime();
    }

    /**
     * How long ago the next renewal was due (a third of the lease after the last one was sent) without one having
     * succeeded since; negative while it is not due yet.
     */
    long renewalOverdueNanos() {
        Holding current = holding;
        return current == null ? 0 : System.nanoTime() - renewedAtNanos - current.leaseNanos() / 3;
    }

    /** When the request that last set the current holding's lease was sent. */
    long renewedAtNanos() {
        return renewedAtNanos;
    }

    /** Whether the watchdog renews the current holding: held without an explicit lease, and not lost. */
    boolean isRenewed() {
        Holding current = holding;
        return current != null && current.renewing() && lostReason == null;
    }

    /**
     * Marks {@code lost} lost, if it is still this key's holding and not lost yet.
     *
     * @return whether it was marked now
     */
    synchronized boolean lose(Holding lost, String reason) {
        if (lost == null || holding != lost || lostReason != null) {
            return false;
        }
        lostReason = reason;
        return true;
    }

    /** Whether the Redis lock is still ours as far as this JVM can know: not lost, lease (less the margin) not run out. */
    boolean isValid() {
        return invalidReason() == null;
    }

    /** Whether a watchdog renewal of {@code holding}, this lock's current holding, is in flight. */
    boolean renewalInFlight(Holding holding) {
        // the holding first: a new holding clears the mark before it is published, so a mark read after the holding
        // is that holding's, never an earlier one's
        return this.holding == holding && renewalSentNanos != NO_RENEWAL;
    }

    /**
     * Whether the watchdog renewal in flight for {@code holding}, this lock's current holding, is the one sent at
     * {@code sentNanos}.
     */
    boolean renewalInFlight(Holding holding, long sentNanos) {
        if (this.holding != holding) { // the holding first, as above
            return false;
        }
        long sent = renewalSentNanos;
        return sent == sentNanos && sent != NO_RENEWAL;
    }

    /**
     * Records a watchdog renewal of {@code holding} sent at {@code sentNanos}, unless one is in flight already or
     * {@code holding} is no longer this lock's.
     *
     * @return whether it was recorded (the renewal is then this caller's to send)
     */
    synchronized boolean renewalSent(Holding holding, long sentNanos) {
        if (this.holding != holding || renewalSentNanos != NO_RENEWAL) {
            return false;
        }
        renewalSentNanos = sentNanos;
        return true;
    }

    /**
     * Ends the watchdog renewal of {@code holding} sent at {@code sentNanos} (answered, given up on, or not sent).
     *
     * @return whether it was the one in flight
     */
    synchronized boolean renewalEnded(Holding holding, long sentNanos) {
        if (!renewalInFlight(holding, sentNanos)) {
            return false;
        }
        renewalSentNanos = NO_RENEWAL;
        return true;
    }

    /** Forgets any watchdog renewal of {@code holding} in flight (it was marked lost). */
    synchronized void renewalDropped(Holding holding) {
        if (this.holding == holding) {
            renewalSentNanos = NO_RENEWAL;
        }
    }

    /** Whether the local view of the current holding's lease (less the margin) had run out at {@code nowNanos}. */
    boolean leaseRanOut(long nowNanos) {
        return nowNanos - validUntilNanos >= 0;
    }

    /** Why the holding is no longer valid, or {@code null} if it is. */
    String invalidReason() {
        Holding current = holding;
        String lost = lostReason;
        if (current == null) {
            return lost != null ? lost : "it is not held";
        }
        if (lost != null) {
            return lost;
        }
        if (System.nanoTime() - validUntilNanos >= 0) {
            return "its lease of " + TimeUnit.NANOSECONDS.toMillis(current.leaseNanos()) + "ms (less a safety margin of "
                    + TimeUnit.NANOSECONDS.toMillis(safetyMarginNanos(current.leaseNanos()))
                    + "ms) ran out before it was renewed or released";
        }
        return null;
    }

    long wakeups() {
        return wakeups;
    }

    /** Called when a release of this key was published: wakes this JVM's contender. */
    void wake() {
        wakeLock.lock();
        try {
            wakeups++;
            woken.signalAll();
        } finally {
            wakeLock.unlock();
        }
    }

    /**
     * Waits until {@link #wake()} is called after {@code seen} was read, or for {@code millis}. A
     * {@link ReentrantLock} and not a monitor: a virtual thread waiting here on Java 21-23 would
     * otherwise pin its carrier thread for the whole wait.
     *
     * @return whether the wait was interrupted (only when not {@code interruptible})
     */
    boolean awaitWake(long seen, long millis, boolean interruptible) throws InterruptedException {
        boolean interrupted = false;
        long left = TimeUnit.MILLISECONDS.toNanos(millis);
        wakeLock.lock();
        try {
            while (wakeups == seen && left > 0) {
                try {
                    left = woken.awaitNanos(left);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            wakeLock.unlock();
        }
        return interrupted;
    }
}
