package io.github.redislock.core;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.stream.Stream;

import io.github.redislock.core.RedisLockDiagnostics.Kind;
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
 * the watchdog and the subscription (held locks are then left to expire with their lease). It checks
 * arguments and delegates: {@link ExclusiveLock} does the locking, on the {@link WaitLoop} every lock
 * type shares, with the Redis calls of {@link LockScripts} and the per-key queues of {@link LocalLocks}.
 */
public final class RedisLockTemplate implements AutoCloseable {

    private final RedisLockConfig config;
    private final String clientId;
    private final LocalLocks locks = new LocalLocks();
    private final WakeupSubscriber subscriber;
    private final Watchdog watchdog;
    private final ExclusiveLock exclusive;
    private final ReadWriteLocks readWrite;
    private final FairLocks fairLocks = new FairLocks();
    private final FairLock fair;
    private final SemaphorePermits semaphores;
    private final RedisLockDiagnostics diagnostics;
    private final LockActivity activity = new LockActivity();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Executor asyncExecutor;

    public RedisLockTemplate(StringRedisTemplate redis) {
        this(redis, RedisLockConfig.defaults());
    }

    public RedisLockTemplate(StringRedisTemplate redis, RedisLockConfig config) {
        Objects.requireNonNull(redis, "redis");
        this.config = Objects.requireNonNull(config, "config");
        this.asyncExecutor = AsyncLockExecutor.create(config.asyncHolders());
        RedisLockKeys keys = new RedisLockKeys(config.keyPrefix());
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        this.clientId = HexFormat.of().formatHex(id);
        ScriptRunner runner = new ScriptRunner(redis, config.replicaAck());
        LockScripts scripts = new LockScripts(runner, keys, clientId);
        this.subscriber = new WakeupSubscriber(Objects.requireNonNull(redis.getConnectionFactory(), "connection factory"),
                keys.wakeChannelPrefix() + clientId, this::wake, this::wakeAll);
        this.watchdog = new Watchdog(config.watchdogLease(), locks.all(), new Renewer(Kind.EXCLUSIVE, scripts::renew,
                scripts.renewMany()));
        BackgroundCleanup cleanup = new BackgroundCleanup(watchdog, config.watchdogLease(), closed::get);
        // the exclusive and the fair lock of a key are one Redis key: one look at a time at an unused turn's end
        WakeLooks exclusiveTurns = new WakeLooks(cleanup, scripts::turnEnded);
        this.exclusive = new ExclusiveLock(scripts, locks, new WaitLoop(subscriber), cleanup, exclusiveTurns, clientId,
                config.watchdogLease());
        this.readWrite = new ReadWriteLocks(scripts, new WaitLoop(subscriber), watchdog, cleanup, clientId, config.watchdogLease());
        this.fair = new FairLock(new FairLockScripts(runner, keys), fairLocks, watchdog, new WaitLoop(subscriber), cleanup,
                exclusiveTurns, clientId, config.watchdogLease());
        this.semaphores = new SemaphorePermits(new SemaphoreScripts(runner, keys), new WaitLoop(subscriber), watchdog,
                cleanup, clientId, config.watchdogLease());
        this.diagnostics = new RedisLockDiagnostics(watchdog, subscriber, () -> Stream.of(
                locks.keys().map(key -> RedisLockDiagnostics.inUse(Kind.EXCLUSIVE, key)),
                fairLocks.waitingKeys().map(key -> RedisLockDiagnostics.inUse(Kind.FAIR, key)),
                readWrite.waitingKeys().map(key -> RedisLockDiagnostics.inUse(Kind.READ, key)),
                semaphores.waitingKeys().map(key -> RedisLockDiagnostics.inUse(Kind.SEMAPHORE, key))).flatMap(s -> s),
                activity);
        watchdog.setEvents(activity);
    }

    /**
     * Acquires the lock, waiting up to the options' wait time.
     *
     * @throws LockNotAcquiredException if it is still held by another owner after the wait time, or
     *         Redis could not be reached within it (the Redis exception is the cause)
     * @throws IllegalArgumentException for a null, blank, over-long or control-character key
     */
    public LockHandle acquire(String key, LockOptions options) {
        Duration wait = waitTime(options);
        return tryExclusive(validateKey(key), wait, options).orElseThrow(() -> new LockNotAcquiredException(key, wait));
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
        Duration wait = waitTime(options);
        return tryExclusive(validateKey(key), wait, options);
    }

    /**
     * Acquires every key or none: sorted and without duplicates, so two callers naming the same keys in any order
     * never deadlock, all within one wait time (the options'), with the options' lease. When a key cannot be had,
     * those already taken are released before this throws. The handle releases them in reverse order.
     *
     * @throws LockNotAcquiredException naming the key still held by another owner after the wait time, or one
     *         Redis could not be reached for
     * @throws IllegalArgumentException for no keys, or a null, blank, over-long or control-character key
     */
    public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options) {
        Duration wait = waitTime(options);
        return MultiLock.acquire(exclusiveFor(options), MultiLock.sortedKeys(keys), wait, options.leaseTime(), true);
    }

    /**
     * Like {@link #acquireAll}, but returns empty instead of throwing when another owner still holds one of the
     * keys after the wait time (nothing is held then). Redis failures still throw {@link LockNotAcquiredException}.
     */
    public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options) {
        Duration wait = waitTime(options);
        return Optional.ofNullable(MultiLock.acquire(exclusiveFor(options), MultiLock.sortedKeys(keys), wait, options.leaseTime(), false));
    }

    /**
     * Acquires the lock, runs {@code action}, and releases the lock, also when the action throws.
     * If the lock was lost while the action ran, the release throws {@link LockLostException} (added as
     * suppressed when the action threw too).
     */
    public <T, E extends Throwable> T execute(String key, LockOptions options, LockCallback<T, E> action) throws E {
        return runAndRelease(acquire(key, options), action);
    }

    /**
     * Runs {@code action} under {@code handle} and releases it, also when the action throws (a release failure is then
     * added to the action's as suppressed). Shared with {@link RedlockTemplate#execute}.
     */
    static <T, E extends Throwable> T runAndRelease(LockHandle handle, LockCallback<T, E> action) throws E {
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
     * Like {@link #execute}, for asynchronous work: acquires the lock without blocking the calling thread, then
     * calls {@code action} and holds the lock until the stage it returns completes, normally, exceptionally or by
     * cancellation, on whichever thread; then releases it. The lock is waited for and held by a holder thread of
     * {@link #asyncExecutor()} (a virtual thread on Java 21+), so the acquisition's owner is that holder, not the
     * caller: an async acquisition is not reentrant with locks the calling thread holds (it waits for them like any
     * other owner). {@code action} runs on the holder thread once the lock is held.
     *
     * @return completes with the action's result after the lock was released; fails with
     *         {@link LockNotAcquiredException} when the lock could not be had within the wait time, with the action's
     *         failure, or with {@link LockLostException} when the lock was lost before the release. Cancelling it stops
     *         the wait for the lock, or cancels the action's stage (when it is a {@code CompletableFuture}) and releases.
     */
    public <T> CompletableFuture<T> executeAsync(String key, LockOptions options, Supplier<? extends CompletionStage<T>> action) {
        Objects.requireNonNull(action, "action");
        Duration wait = waitTime(options);
        String validKey = validateKey(key);
        return AsyncHold.executeAsync(asyncExecutor, () -> tryExclusive(validKey, wait, options)
                .orElseThrow(() -> new LockNotAcquiredException(validKey, wait)), action);
    }

    /**
     * The threads that wait for and hold the locks of asynchronous work ({@link #executeAsync}, {@link AsyncHold}):
     * one per asynchronous acquisition in flight; virtual threads on Java 21+, else at most
     * {@link RedisLockConfig.AsyncHolders#maxHolders()} daemon threads, a call waiting for a free one up to
     * {@link RedisLockConfig.AsyncHolders#holderWait()} (then its future or publisher fails with
     * {@link java.util.concurrent.RejectedExecutionException}).
     */
    public Executor asyncExecutor() {
        return asyncExecutor;
    }

    /**
     * A {@link Lock} view of the key: reentrant, watchdog-leased. {@code lock()} waits without bound
     * and keeps waiting when interrupted; {@code newCondition()} is not supported.
     */
    public Lock lock(String key) {
        return new RedisReentrantLock(exclusive, locks, validateKey(key));
    }

    /**
     * A {@link ReadWriteLock} view of the key: many readers or one writer, across threads and JVMs; both sides
     * reentrant per thread and watchdog-leased, each reader with a lease of its own (a crashed reader frees only
     * its share). The writer may take the read lock and then release the write lock (downgrade); a reader asking
     * for the write lock gets {@link IllegalMonitorStateException} at once (upgrading is not supported). A waiting
     * writer keeps new readers out. A lock apart from {@link #lock(String)} of the same key. {@code lock()} waits
     * without bound and keeps waiting when interrupted; {@code newCondition()} is not supported.
     */
    public ReadWriteLock readWriteLock(String key) {
        return new RedisReadWriteLock(readWrite, validateKey(key));
    }

    /**
     * Like {@link #acquireAll(Collection, LockOptions)}, with one side of each key's {@link #readWriteLock}. The
     * handle's fencing tokens are the writer's own, or for {@link LockMode#READ} the read epoch's: drawn when the
     * first reader entered after nobody read, shared by the readers joining it, below any later writer's.
     *
     * @throws IllegalMonitorStateException for {@link LockMode#WRITE} on a key whose read lock this thread holds
     */
    public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options, LockMode mode) {
        Duration wait = waitTime(options);
        Objects.requireNonNull(mode, "mode");
        return MultiLock.acquire(readWriteFor(options, mode), MultiLock.sortedKeys(keys), wait, options.leaseTime(), true);
    }

    /** Like {@link #acquireAll(Collection, LockOptions, LockMode)}, but empty when another owner kept a key past the wait. */
    public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options, LockMode mode) {
        Duration wait = waitTime(options);
        Objects.requireNonNull(mode, "mode");
        return Optional.ofNullable(MultiLock.acquire(readWriteFor(options, mode), MultiLock.sortedKeys(keys), wait, options.leaseTime(), false));
    }

    /**
     * A fair {@link Lock} view of the key: threads get it in the order their requests reached Redis, across
     * threads and JVMs, and a release hands it straight to the next waiter. Reentrant, fenced and watchdog-leased
     * like {@link #lock}; a waiter that died or gave up is skipped within a second. The fair lock uses the same
     * Redis lock as {@link #lock} and {@link #acquire} for the key, so they exclude each other, but only fair
     * acquisitions queue: an exclusive one can take the key between fair holders. {@code tryLock()} never
     * overtakes a queued waiter; {@code newCondition()} is not supported.
     */
    public Lock fairLock(String key) {
        return new RedisFairLock(fair, validateKey(key));
    }

    /**
     * Acquires the fair lock of {@link #fairLock}, waiting in line up to the options' wait time, with the options'
     * lease (none: the watchdog's).
     *
     * @throws LockNotAcquiredException if the current thread's turn did not come within the wait time, or Redis
     *         could not be reached within it
     */
    public LockHandle acquireFair(String key, LockOptions options) {
        Duration wait = waitTime(options);
        return tryFair(validateKey(key), wait, options).orElseThrow(() -> new LockNotAcquiredException(key, wait));
    }

    /** Like {@link #acquireFair}, but returns empty instead of throwing when the turn did not come in time. */
    public Optional<LockHandle> tryAcquireFair(String key, LockOptions options) {
        Duration wait = waitTime(options);
        return tryFair(validateKey(key), wait, options);
    }

    /**
     * A counting semaphore on the key: at most {@code permits} held at once across clients (changeable at run time
     * with {@link RedisSemaphore#setPermits}), each acquisition leased and watchdog-renewed like a lock, so a crashed
     * holder's permits come back when its lease ends. A semaphore and a lock on the same key are independent.
     *
     * @param permits the limit stored in Redis by the first acquisition, when none is stored there yet; at least 1
     * @throws IllegalArgumentException for a bad key or fewer than 1 permit
     */
    public RedisSemaphore semaphore(String key, int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("a semaphore needs at least 1 permit, was " + permits);
        }
        return new RedisSemaphore(semaphores, validateKey(key), permits, config.defaultWaitTime(), activity);
    }

    /**
     * Registers a listener told when a held lock is found lost. Listeners run on a thread of their own,
     * one notification after another: a slow one delays other listeners, never a renewal.
     */
    public void addLockLostListener(LockLostListener listener) {
        watchdog.addLockLostListener(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Registers an observer told of every acquisition through this template's API (and so {@code @DistributedLock}),
     * release, loss and watchdog renewal: for metrics and tracing. The {@code Lock} views are not observed.
     */
    public void addObserver(LockObserver observer) {
        activity.addObserver(Objects.requireNonNull(observer, "observer"));
    }

    public RedisLockConfig config() {
        return config;
    }

    /** This client's random id (128 bits, hex); the Redis owner of a lock is this id plus the thread. */
    public String clientId() {
        return clientId;
    }

    /** What this client holds and does in this JVM now: local locks, renewals, the release subscription. */
    public RedisLockDiagnostics diagnostics() {
        return diagnostics;
    }

    /**
     * Checks a lock key as every acquisition does.
     *
     * @return the key
     * @throws IllegalArgumentException naming the problem: null, blank, over 512 bytes (UTF-8), or control characters
     */
    public static String validateKey(String key) {
        return RedisLockKeys.validate(key);
    }

    /** Stops the watchdog and the release subscription. Held locks are not released: they expire with their lease. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            watchdog.close();
            subscriber.close();
        }
    }

    private Optional<LockHandle> tryExclusive(String key, Duration wait, LockOptions options) {
        return activity.acquire(options.name(), key, "exclusive",
                () -> exclusive.tryAcquire(key, wait, options.leaseTime(), options.holdAtLeast()));
    }

    private MultiLock.Acquisition exclusiveFor(LockOptions options) {
        return (key, left, lease) -> activity.acquire(options.name(), key, "exclusive",
                () -> exclusive.tryAcquire(key, left, lease, options.holdAtLeast()));
    }

    private MultiLock.Acquisition readWriteFor(LockOptions options, LockMode mode) {
        refuseHoldAtLeast(options, mode == LockMode.READ ? "read" : "write");
        return (key, left, lease) -> activity.acquire(options.name(), key, mode == LockMode.READ ? "read" : "write",
                () -> readWrite.tryAcquire(key, mode, left, lease));
    }

    private Optional<LockHandle> tryFair(String key, Duration wait, LockOptions options) {
        refuseHoldAtLeast(options, "fair");
        return activity.acquire(options.name(), key, "fair", () -> fair.tryAcquire(key, wait, options.leaseTime()));
    }

    static void refuseHoldAtLeast(LockOptions options, String type) {
        if (options.holdAtLeast() != null) {
            throw new IllegalArgumentException("holdAtLeast is supported by the exclusive lock only, not by the " + type
                    + " lock: " + options);
        }
    }

    private Duration waitTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        return options.waitTime() != null ? options.waitTime() : config.defaultWaitTime();
    }

    /** Whether notices published to this client reach it now; starts its subscription if needed (for tests). */
    boolean isListening() {
        return subscriber.isListening();
    }

    /** The reading threads in this client's open read share of {@code key}; {@code 0} when none is open (for tests). */
    int readShareReaders(String key) {
        return readWrite.shareReaders(key);
    }

    /** A release of {@code key} was published to this client: wakes its contenders for the key, of either lock type. */
    private void wake(String key) {
        if (!fairLocks.wake(key)) { // a fair hand-over names one waiting thread; otherwise the key's waiters look again
            locks.wake(key);
            readWrite.wake(key);
            semaphores.wake(key);
        }
    }

    private void wakeAll() {
        locks.wakeAll();
        readWrite.wakeAll();
        fairLocks.wakeAll();
        semaphores.wakeAll();
    }

    LocalLock localLock(String key) {
        return locks.get(key);
    }

    Watchdog watchdog() {
        return watchdog;
    }
}
