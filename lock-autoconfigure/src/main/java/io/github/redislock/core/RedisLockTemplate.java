package io.github.redislock.core;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Distributed, reentrant, owner-checked, leased locks on Redis.
 * <p>
 * Threads of one JVM queue for a key in memory, so Redis sees one contender per JVM and a nested
 * acquisition by the holder costs no round trip. Locks without an explicit lease are renewed by the
 * {@link Watchdog} every third of the watchdog lease. Waiters sleep until a release is
 * published to them, re-checking at the latest when the holder's lease would end.
 * <p>
 * A plain class: construct it with a {@link StringRedisTemplate}, and {@link #close()} it to stop
 * the watchdog and the subscription (held locks are then left to expire with their lease).
 */
public final class RedisLockTemplate implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLockTemplate.class);

    /** How long a fencing counter outlives the acquisition that set it; see {@code acquire.lua}. */
    static final long FENCE_GRACE_MILLIS = 1000;
    /** Re-check interval while the release subscription is down (Redis restarting, say). */
    private static final long UNSUBSCRIBED_RECHECK_MILLIS = 50;
    /**
     * The longest a waiter sleeps before re-checking, whatever the holder's TTL: bounds the cost of a
     * wake-up lost to a waiter that died or left, and how long a dead waiter's registration lives.
     */
    private static final long MAX_SLEEP_MILLIS = 5000;
    /** Waiting clients each release wakes: the longest-waiting, plus one in case that one is gone. */
    private static final String CLIENTS_WOKEN_PER_RELEASE = "2";
    /**
     * How long, after a release, the lock is kept for the clients it woke: long enough for a woken client to answer
     * on a busy machine, short enough that a woken client that died costs little. See release.lua.
     */
    private static final String TURN_MILLIS = "200";
    private static final Duration LONGEST_FINITE_WAIT = Duration.ofDays(36_500);
    /** Pause between attempts while Redis cannot be reached. */
    private static final long ERROR_BACKOFF_MILLIS = 50;

    private final StringRedisTemplate redis;
    private final RedisLockConfig config;
    private final RedisLockKeys keys;
    private final String clientId;
    private final ConcurrentHashMap<String, LocalLock> locks = new ConcurrentHashMap<>();
    private final Watchdog watchdog;
    /** Clean-up work off the caller's thread, e.g. undoing a request whose reply was lost. */
    private final WakeupSubscriber subscriber;
    /** Numbers this client's acquisitions, so every attempt has its own owner id in Redis. */
    private final AtomicLong acquisitions = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();

    public RedisLockTemplate(StringRedisTemplate redis) {
        this(redis, RedisLockConfig.defaults());
    }

    public RedisLockTemplate(StringRedisTemplate redis, RedisLockConfig config) {
        this.redis = Objects.requireNonNull(redis, "redis");
        this.config = Objects.requireNonNull(config, "config");
        this.keys = new RedisLockKeys(config.keyPrefix());
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        this.clientId = HexFormat.of().formatHex(id);
        this.subscriber = new WakeupSubscriber(Objects.requireNonNull(redis.getConnectionFactory(), "connection factory"),
                keys.wakeChannelPrefix() + clientId, this::onReleasePublished, this::wakeAllWaiters);
        this.watchdog = new Watchdog(redis, keys, config.watchdogLease(), locks.values());
    }

    // ---------------------------------------------------------------- public API

    /**
     * Acquires the lock, waiting up to the options' wait time.
     *
     * @throws LockNotAcquiredException if it is still held by another owner after the wait time, or
     *         Redis could not be reached within it (the Redis exception is the cause)
     * @throws IllegalArgumentException for a null, blank, over-long or control-character key
     */
    public LockHandle acquire(String key, LockOptions options) {
        Duration wait = waitTime(options);
        LocalLock lock = lockInternal(key, wait, options);
        if (lock == null) {
            throw new LockNotAcquiredException(key, wait);
        }
        return new Acquisition(lock);
    }

    /** Acquires with the default wait time and the watchdog. */
    public LockHandle acquire(String key) {
        return acquire(key, LockOptions.defaults());
    }

    /**
     * Like {@link #acquire}, but returns empty instead of throwing when another owner still holds the
     * lock after the wait time. Redis failures still throw {@link LockNotAcquiredException}.
     */
    public Optional<LockHandle> tryAcquire(String key, LockOptions options) {
        LocalLock lock = lockInternal(key, waitTime(options), options);
        return lock == null ? Optional.empty() : Optional.of(new Acquisition(lock));
    }

    /**
     * Acquires the lock, runs {@code action}, and releases the lock, also when the action throws.
     * If the lock was lost while the action ran, the release throws {@link LockLostException} (added as
     * suppressed when the action threw too).
     */
    public <T, E extends Throwable> T execute(String key, LockOptions options, LockCallback<T, E> action) throws E {
        LockHandle handle = acquire(key, options);
        T result;
        try {
            result = action.doInLock(handle);
        } catch (Throwable failure) {
            try {
                handle.release();
            } catch (RuntimeException releaseFailure) {
                failure.addSuppressed(releaseFailure);
            }
            throw failure;
        }
        handle.release();
        return result;
    }

    /**
     * A {@link Lock} view of the key: reentrant, watchdog-leased. {@code lock()} waits without bound
     * and keeps waiting when interrupted; {@code newCondition()} is not supported.
     */
    public Lock lock(String key) {
        return new RedisReentrantLock(this, RedisLockKeys.validate(key));
    }

    /**
     * Registers a listener told when a held lock is found lost. Listeners run on a thread of their own,
     * one notification after another: a slow one delays other listeners, never a renewal.
     */
    public void addLockLostListener(LockLostListener listener) {
        watchdog.addLockLostListener(Objects.requireNonNull(listener, "listener"));
    }

    public RedisLockConfig config() {
        return config;
    }

    /** This client's random id (128 bits, hex); the Redis owner of a lock is this id plus the thread. */
    public String clientId() {
        return clientId;
    }

    /** Keys of this JVM with a holder or waiter (for diagnostics and tests). */
    public int localLockCount() {
        return locks.size();
    }

    /** Whether this client is subscribed to release notices: from its first wait until it is closed. */
    public boolean isSubscribed() {
        return subscriber.isSubscribed();
    }

    /** Locks the watchdog is renewing (for diagnostics and tests). */
    public int scheduledRenewalCount() {
        return (int) locks.values().stream().filter(LocalLock::isRenewed).count();
    }

    /** Stops the watchdog and the release subscription. Held locks are not released: they expire with their lease. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            watchdog.close();
            subscriber.close();
        }
    }

    // ---------------------------------------------------------------- acquisition

    private Duration waitTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        return options.waitTime() != null ? options.waitTime() : config.defaultWaitTime();
    }

    /**
     * The template API's acquisition: an interrupt while waiting ends the wait with
     * {@link LockNotAcquiredException} and leaves the thread's interrupt flag set.
     *
     * @return the local lock, now held by the current thread; {@code null} if another owner kept it
     */
    private LocalLock lockInternal(String key, Duration wait, LockOptions options) {
        try {
            return lock(RedisLockKeys.validate(key), wait, options.leaseTime(), true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, wait, e);
        }
    }

    /**
     * The acquisition algorithm shared by every entry point.
     *
     * @param wait how long to wait; {@link LockOptions#WAIT_FOREVER} for no bound
     * @param lease the fixed lease, or {@code null} for the watchdog
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if not
     *        (the JUC {@code lock()}), waiting goes on and the interrupt flag is restored afterwards
     * @return the local lock, held by the current thread; {@code null} on timeout
     */
    LocalLock lock(String key, Duration wait, Duration lease, boolean interruptible) throws InterruptedException {
        long start = System.nanoTime();
        // a wait beyond a century cannot be told apart from forever, and would overflow nanosecond arithmetic
        long waitNanos = wait.compareTo(LONGEST_FINITE_WAIT) > 0 ? Long.MAX_VALUE : wait.toNanos();
        long deadline = waitNanos == Long.MAX_VALUE ? Long.MAX_VALUE : start + waitNanos;
        LocalLock lock = retain(key);
        boolean acquired = false;
        boolean interrupted = false;
        Runnable undo = null;
        try {
            if (lock.mutex.isHeldByCurrentThread()) {
                if (interruptible && waitNanos > 0 && Thread.interrupted()) {
                    throw new InterruptedException(); // as ReentrantLock.lockInterruptibly does for its holder
                }
                String invalid = lock.invalidReason();
                if (invalid != null) {
                    throw new LockLostException(key, lock.token, invalid);
                }
                lock.mutex.lock();
                acquired = true;
                return lock;
            }
            if (waitNanos == 0) {
                if (!lock.mutex.tryLock()) {
                    return null;
                }
            } else if (!interruptible && waitNanos == Long.MAX_VALUE) {
                lock.mutex.lock();
            } else if (!interruptible) {
                throw new IllegalArgumentException("a bounded wait is always interruptible");
            } else if (!lock.mutex.tryLock(remaining(deadline), TimeUnit.NANOSECONDS)) {
                return null;
            }
            try {
                if (lock.handedOver && adoptHandover(lock, lease)) {
                    acquired = true;
                    return lock;
                }
                interrupted |= acquireInRedis(lock, start, deadline, lease, interruptible);
                acquired = lock.owner != null;
            } finally {
                if (!acquired) {
                    undo = lock.undoAfterGivingUp;
                    lock.undoAfterGivingUp = null;
                    lock.mutex.unlock();
                }
            }
            return acquired ? lock : null;
        } finally {
            if (!acquired) {
                unretain(lock);
                if (undo != null) {
                    runInBackground(undo); // now that this thread no longer counts as a contender of this JVM
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The current thread holds the local mutex; takes the Redis lock. Returns whether an interrupt was swallowed. */
    private boolean acquireInRedis(LocalLock lock, long start, long deadline, Duration lease, boolean interruptible)
            throws InterruptedException {
        // client + thread, plus which acquisition of this client: a late clean-up of an earlier attempt
        // can never release a later one
        String owner = clientId + ":" + Thread.currentThread().getId() + ":" + acquisitions.incrementAndGet();
        long leaseMillis = lease != null ? lease.toMillis() : config.watchdogLease().toMillis();
        List<String> scriptKeys = scriptKeys(lock.key);
        String leaseArg = Long.toString(leaseMillis);
        String graceArg = Long.toString(FENCE_GRACE_MILLIS);
        boolean interrupted = false;
        boolean registered = false;
        // the error of the latest attempt, cleared by a clean answer: it is what a caller is told at the deadline
        DataAccessException lastError = null;
        // whether any attempt failed: its request may still run in Redis, taking the lock or registering a waiter
        boolean uncertain = false;
        while (true) {
            long seen = lock.wakeups();
            long left = remaining(deadline);
            long requestStart = System.nanoTime();
            Long reply;
            try {
                String sleepArg = Long.toString(Math.min(TimeUnit.NANOSECONDS.toMillis(left), MAX_SLEEP_MILLIS));
                reply = redis.execute(LockScripts.ACQUIRE, scriptKeys, owner, leaseArg, clientId, sleepArg, graceArg,
                        registered ? "1" : "0", CLIENTS_WOKEN_PER_RELEASE);
                registered |= left > 0;
                lastError = null; // a later clean answer supersedes an earlier error
            } catch (DataAccessException e) {
                lastError = e;
                uncertain = true;
                registered |= left > 0;
                reply = null;
            }
            if (reply != null && reply > 0) {
                lock.held(owner, reply, TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart, lease == null);
                return interrupted;
            }
            left = remaining(deadline);
            if (left <= 0) {
                giveUp(lock, owner, registered, uncertain);
                if (lastError != null) {
                    throw new LockNotAcquiredException(lock.key, Duration.ofNanos(System.nanoTime() - start), lastError);
                }
                return interrupted;
            }
            long sleepMillis;
            if (reply == null) {
                sleepMillis = ERROR_BACKOFF_MILLIS;
            } else {
                if (subscriber.startIfNeeded()) {
                    continue; // a release published before this client listened was missed: look again now
                }
                sleepMillis = Math.min(-reply, subscriber.isListening() ? MAX_SLEEP_MILLIS : UNSUBSCRIBED_RECHECK_MILLIS);
            }
            sleepMillis = Math.max(1, Math.min(sleepMillis, TimeUnit.NANOSECONDS.toMillis(left) + 1));
            try {
                interrupted |= lock.awaitWake(seen, sleepMillis, interruptible);
            } catch (InterruptedException e) {
                giveUp(lock, owner, registered, uncertain);
                throw e;
            }
        }
    }

    /**
     * Leaves nothing behind after a failed wait: the waiter entry, and a lock whose grant reply was lost.
     *
     * @param uncertain whether an attempt failed: its request may have run in Redis after the client gave up
     */
    private void giveUp(LocalLock lock, String owner, boolean registered, boolean uncertain) {
        List<String> waiterKeys = List.of(keys.waiters(lock.key), keys.waiterExpiries(lock.key));
        if (uncertain) {
            // the failed request may still have taken the lock or registered this client as a waiter; undo both
            // off the caller's thread, so the caller's failure is not delayed by another client timeout
            // (run once the giving-up thread has left the key's local queue: see lock())
            lock.undoAfterGivingUp = () -> {
                releaseInRedis(lock.key, owner, null);
                if (!locks.containsKey(lock.key)) { // else another thread of this client contends now, registered
                    redis.execute(LockScripts.LEAVE, waiterKeys, clientId);
                }
            };
            return;
        }
        if (registered) {
            withoutInterrupt(() -> {
                try {
                    redis.execute(LockScripts.LEAVE, waiterKeys, clientId);
                } catch (RuntimeException e) { // Redis unreachable, or this template closed meanwhile
                    log.debug("Could not withdraw from the waiters of lock '{}'; Redis TTLs will", lock.key, e);
                    runInBackground(() -> redis.execute(LockScripts.LEAVE, waiterKeys, clientId));
                }
            });
        }
    }

    /**
     * Work that must not delay the caller: undoing requests whose replies were lost. Retried while Redis cannot be
     * reached, until the watchdog lease has passed: by then every lock it could undo has expired anyway.
     */
    private void runInBackground(Runnable task) {
        runInBackground(task, System.nanoTime() + config.watchdogLease().toNanos(), 0);
    }

    private void runInBackground(Runnable task, long giveUpAt, long delayMillis) {
        try {
            watchdog.runInBackground(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    if (System.nanoTime() - giveUpAt < 0 && !closed.get()) {
                        log.debug("Background clean-up failed; retrying", e);
                        runInBackground(task, giveUpAt, Math.min(Math.max(ERROR_BACKOFF_MILLIS, delayMillis * 2), 1000));
                    } else {
                        log.debug("Background clean-up failed; Redis TTLs will end what it left", e);
                    }
                }
            }, delayMillis);
        } catch (RuntimeException e) { // closed
            log.debug("Background clean-up not run: the template is closed", e);
        }
    }

    /**
     * Runs Redis calls of a release path with the interrupt flag cleared, then restores it: a driver that aborts
     * a call on an interrupted thread (Lettuce) would lose the reply of a request Redis still runs.
     */
    private static void withoutInterrupt(Runnable action) {
        boolean interrupted = Thread.interrupted();
        try {
            action.run();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static long remaining(long deadline) {
        return deadline == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, deadline - System.nanoTime());
    }

    private LocalLock retain(String key) {
        return locks.compute(key, (k, lock) -> {
            LocalLock l = lock != null ? lock : new LocalLock(k);
            l.users++;
            return l;
        });
    }

    private void unretain(LocalLock lock) {
        boolean[] dropped = {false};
        locks.computeIfPresent(lock.key, (k, current) -> {
            if (current != lock || --current.users > 0) {
                return current;
            }
            dropped[0] = true;
            return null;
        });
        if (dropped[0] && lock.handedOver) {
            // every thread queued for it gave up: nobody will take the lock it was handed
            lock.handedOver = false;
            giveBack(lock);
        }
    }

    private void onReleasePublished(String key) {
        LocalLock lock = locks.get(key);
        if (lock != null) {
            lock.wake();
        }
    }

    private void wakeAllWaiters() {
        locks.values().forEach(LocalLock::wake);
    }

    // ---------------------------------------------------------------- release

    /** Releases one hold of the current thread on {@code lock}. */
    void release(LocalLock lock) {
        if (!lock.mutex.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("Lock '" + lock.key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'; only the thread that acquired it may release it");
        }
        if (lock.mutex.getHoldCount() > 1) {
            lock.mutex.unlock();
            unretain(lock);
            return;
        }
        long token = lock.token;
        String invalid = lock.invalidReason();
        String owner = lock.releasing();
        long[] reply = {1};
        try {
            withoutInterrupt(() -> reply[0] = releaseOrHandOver(lock, owner, invalid == null && lock.mutex.hasQueuedThreads()));
        } finally {
            lock.mutex.unlock();
            unretain(lock);
        }
        if (invalid != null) {
            throw new LockLostException(lock.key, token, invalid);
        }
        if (reply[0] == 0) {
            throw new LockLostException(lock.key, token, "Redis no longer had it as this owner's at release");
        }
    }

    /**
     * Releases {@code owner}'s Redis lock, or hands it to the next thread of this JVM when one queues for the key
     * and no other client waits. A request whose reply was lost is undone in the background: it may have released
     * the lock, handed it to an owner nobody will adopt, or not run at all.
     *
     * @return the release script's reply; 1 when the reply was lost (the lease bounds the lock either way)
     */
    private long releaseOrHandOver(LocalLock lock, String owner, boolean handOver) {
        String next = handOver ? clientId + ":handover:" + acquisitions.incrementAndGet() : null;
        long requestStart = System.nanoTime();
        try {
            long reply = releaseInRedis(lock.key, owner, next);
            if (next != null && reply > 1) {
                lock.held(next, reply, config.watchdogLease().toNanos(), requestStart, true);
                lock.handedOver = true;
            }
            return reply;
        } catch (DataAccessException e) {
            log.warn("Could not release lock '{}' in Redis ({}); retrying in the background, and its lease ends it at the "
                    + "latest", lock.key, e.toString());
            runInBackground(() -> {
                // in this order whether the lost request ran already, runs later (then it finds owner gone and
                // does nothing) or never
                releaseInRedis(lock.key, owner, null);
                if (next != null) {
                    releaseInRedis(lock.key, next, null); // it handed the lock over, but nobody will adopt it
                }
            });
            return 1;
        }
    }

    /**
     * Runs the release script; with {@code nextOwner}, it may hand the lock over instead.
     *
     * @return 1 when released, 0 when {@code owner} no longer held it, else the next holder's fencing token
     */
    private long releaseInRedis(String key, String owner, String nextOwner) {
        Long reply = nextOwner == null
                ? redis.execute(LockScripts.RELEASE, scriptKeys(key), owner, keys.wakeChannelPrefix(), key,
                        CLIENTS_WOKEN_PER_RELEASE, "", "", "", "", TURN_MILLIS)
                : redis.execute(LockScripts.RELEASE, scriptKeys(key), owner, keys.wakeChannelPrefix(), key,
                        CLIENTS_WOKEN_PER_RELEASE, nextOwner, Long.toString(config.watchdogLease().toMillis()),
                        Long.toString(FENCE_GRACE_MILLIS), clientId, TURN_MILLIS);
        return reply == null ? 0 : reply;
    }

    /**
     * Takes over a lock the previous holder handed to this thread (it holds the mutex now).
     *
     * @return whether this thread holds the Redis lock now; if not, it acquires it the usual way
     */
    private boolean adoptHandover(LocalLock lock, Duration lease) {
        lock.handedOver = false;
        String owner = lock.owner;
        if (owner == null || !lock.isValid()) {
            giveBack(lock); // lost or run out while it waited for its next holder
            return false;
        }
        if (lease == null) {
            return true; // handed over with the watchdog's lease, and renewed since
        }
        long requestStart = System.nanoTime();
        try {
            Long renewed = redis.execute(LockScripts.RENEW, List.of(keys.lock(lock.key)), owner, Long.toString(lease.toMillis()), "exact");
            if (renewed != null && renewed == 1) {
                lock.held(owner, lock.token, lease.toNanos(), requestStart, false); // a fixed lease: not renewed
                return true;
            }
        } catch (DataAccessException e) {
            log.debug("Could not set the lease of handed-over lock '{}'; acquiring it afresh", lock.key, e);
        }
        giveBack(lock);
        return false;
    }

    /** Releases, in Redis, a handed-over lock that no thread will use (lost, run out, or nobody took it). */
    private void giveBack(LocalLock lock) {
        String owner = lock.releasing();
        if (owner == null) {
            return;
        }
        withoutInterrupt(() -> {
            try {
                releaseInRedis(lock.key, owner, null);
            } catch (DataAccessException e) {
                log.debug("Could not release handed-over lock '{}'; retrying in the background", lock.key, e);
                runInBackground(() -> releaseInRedis(lock.key, owner, null));
            }
        });
    }

    private List<String> scriptKeys(String key) {
        return List.of(keys.lock(key), keys.fence(key), keys.waiters(key), keys.waiterExpiries(key));
    }

    LocalLock localLock(String key) {
        return locks.get(key);
    }

    Watchdog watchdog() {
        return watchdog;
    }

    /** One acquisition, handed to the caller. */
    private final class Acquisition implements LockHandle {

        private final LocalLock lock;
        private final Thread thread = Thread.currentThread();
        private final long token;
        private boolean released;

        Acquisition(LocalLock lock) {
            this.lock = lock;
            this.token = lock.token;
        }

        @Override
        public String key() {
            return lock.key;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public boolean isHeld() {
            return !released && lock.token == token && lock.isValid();
        }

        @Override
        public void release() {
            if (Thread.currentThread() != thread) {
                throw new IllegalMonitorStateException("Lock '" + lock.key + "' was acquired by thread '" + thread.getName()
                        + "'; only that thread may release it (current: '" + Thread.currentThread().getName() + "')");
            }
            if (released) {
                throw new IllegalMonitorStateException("Lock '" + lock.key + "' was already released by this handle");
            }
            released = true;
            RedisLockTemplate.this.release(lock);
        }

        @Override
        public String toString() {
            return "LockHandle[" + lock.key + ", token " + token + (isHeld() ? ", held]" : ", not held]");
        }
    }
}
