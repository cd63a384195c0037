package io.github.redislock.core;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
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
public final class RedisLockTemplate implements LockOperations {

    private final RedisLockConfig config;
    private final EngineContext context;
    private final WakeupSubscriber subscriber;
    private final ExclusiveEngine exclusive;
    private final ReadWriteLocks readWrite;
    private final FairLock fair;
    private final SemaphorePermits semaphores;
    /** Every lock type's engine, the fair lock's first: a fair hand-over's notice names one of its waiting threads. */
    private final List<LockEngine> engines;
    private final RedisLockDiagnostics diagnostics;
    private final Executor asyncExecutor;
    private final RedisLockView.Verbs exclusiveVerbs;
    private final RedisLockView.Verbs fairVerbs;
    private final RedisLockView.Verbs readVerbs;
    private final RedisLockView.Verbs writeVerbs;

    public RedisLockTemplate(StringRedisTemplate redis) {
        this(redis, RedisLockConfig.defaults());
    }

    public RedisLockTemplate(StringRedisTemplate redis, RedisLockConfig config) {
        Objects.requireNonNull(redis, "redis");
        this.config = Objects.requireNonNull(config, "config");
        this.asyncExecutor = AsyncLockExecutor.create(config.asyncHolders());
        RedisLockKeys keys = new RedisLockKeys(config.keyPrefix());
        String clientId = EngineContext.newClientId();
        ScriptRunner runner = new ScriptRunner(redis, config.replicaAck());
        LockScripts scripts = new LockScripts(runner, keys, clientId, true);
        RedisConnectionFactory factory = Objects.requireNonNull(redis.getConnectionFactory(), "connection factory");
        this.subscriber = new WakeupSubscriber(factory, keys.wakeChannelPrefix() + clientId, this::wake, this::wakeAll);
        this.context = new EngineContext("RedisLockTemplate", clientId, config.watchdogLease(), new WaitLoop(subscriber),
                PooledConnections.callsAtOnce(factory, config.replicaAck().enabled(), Integer.MAX_VALUE),
                key -> runner.masterOf(keys.lock(key)));
        this.exclusive = new ExclusiveEngine(context, scripts);
        this.readWrite = new ReadWriteLocks(scripts, context);
        this.fair = new FairLock(new FairLockScripts(runner, keys), context, exclusive.turnLooks);
        this.semaphores = new SemaphorePermits(new SemaphoreScripts(runner, keys), context);
        this.engines = List.of(fair, exclusive, readWrite, semaphores);
        this.diagnostics = new RedisLockDiagnostics(context.watchdog, subscriber,
                () -> engines.stream().flatMap(LockEngine::inUse), context.activity);
        this.exclusiveVerbs = new RedisLockView.Verbs(this::tryExclusive, config.defaultWaitTime(), asyncExecutor);
        this.fairVerbs = new RedisLockView.Verbs(this::tryFair, config.defaultWaitTime(), asyncExecutor);
        this.readVerbs = new RedisLockView.Verbs((key, wait, options) -> tryReadWrite(key, LockType.READ, wait, options),
                config.defaultWaitTime(), asyncExecutor);
        this.writeVerbs = new RedisLockView.Verbs((key, wait, options) -> tryReadWrite(key, LockType.WRITE, wait, options),
                config.defaultWaitTime(), asyncExecutor);
    }

    /**
     * The exclusive lock of the key: reentrant, fenced, watchdog-leased, handed over in memory between threads of
     * this JVM. {@code lock()} waits without bound and keeps waiting when interrupted; {@code newCondition()} is not
     * supported.
     *
     * @throws IllegalArgumentException for a null, blank, over-long or control-character key
     */
    @Override
    public RedisLock lock(String key) {
        return exclusive.lock(validateKey(key), exclusiveVerbs);
    }

    @Override
    public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options) {
        return acquireAll(keys, options, LockType.EXCLUSIVE);
    }

    @Override
    public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options) {
        return tryAcquireAll(keys, options, LockType.EXCLUSIVE);
    }

    /**
     * Like {@link #acquireAll(Collection, LockOptions)}, with the exclusive lock or one side of each key's
     * {@link #readWriteLock}. The handle's fencing tokens are the writer's own, or for {@link LockType#READ} the read
     * epoch's: drawn when the first reader entered after nobody read, shared by the readers joining it, below any
     * later writer's.
     *
     * @param type {@link LockType#EXCLUSIVE}, {@link LockType#READ} or {@link LockType#WRITE}
     * @throws IllegalMonitorStateException for {@link LockType#WRITE} on a key whose read lock this thread holds
     * @throws IllegalArgumentException for another type
     */
    public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options, LockType type) {
        Duration wait = waitTime(options);
        return MultiLock.acquire(multiFor(options, type), MultiLock.sortedKeys(keys), wait, options.leaseTime(), true);
    }

    /** Like {@link #acquireAll(Collection, LockOptions, LockType)}, but empty when another owner kept a key past the wait. */
    public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options, LockType type) {
        Duration wait = waitTime(options);
        return Optional.ofNullable(MultiLock.acquire(multiFor(options, type), MultiLock.sortedKeys(keys), wait,
                options.leaseTime(), false));
    }

    /**
     * Runs {@code action} under {@code handle} and releases it, also when the action throws (a release failure is then
     * added to the action's as suppressed). Shared by every lock object's {@code execute}.
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

    @Override
    public Executor asyncExecutor() {
        return asyncExecutor;
    }

    /**
     * The read/write lock of the key: many readers or one writer, across threads and JVMs; both sides reentrant per
     * thread and watchdog-leased, each reader with a lease of its own (a crashed reader frees only its share). The
     * writer may take the read lock and then release the write lock (downgrade); a reader asking for the write lock
     * gets {@link IllegalMonitorStateException} at once (upgrading is not supported). A waiting writer keeps new
     * readers out. A lock apart from {@link #lock(String)} of the same key. {@code holdAtLeast} is refused.
     */
    public RedisReadWriteLock readWriteLock(String key) {
        return new ReadWriteLockView(readWrite, validateKey(key), readVerbs, writeVerbs);
    }

    /**
     * The fair lock of the key: threads get it in the order their requests reached Redis, across threads and JVMs,
     * and a release hands it straight to the next waiter. Reentrant, fenced and watchdog-leased like {@link #lock};
     * a waiter that died or gave up is skipped within a second. The fair lock uses the same Redis lock as
     * {@link #lock} of the key, so they exclude each other, but only fair acquisitions queue: an exclusive one can
     * take the key between fair holders. {@code tryLock()} never overtakes a queued waiter; {@code holdAtLeast} is
     * refused.
     */
    public RedisLock fairLock(String key) {
        return new RedisFairLock(fair, validateKey(key), fairVerbs);
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
        return new RedisSemaphore(semaphores, validateKey(key), permits, config.defaultWaitTime(), context.activity);
    }

    /**
     * Registers a listener told when a held lock is found lost. Listeners run on a thread of their own,
     * one notification after another: a slow one delays other listeners, never a renewal.
     */
    @Override
    public void addLockLostListener(LockLostListener listener) {
        context.watchdog.addLockLostListener(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Registers an observer told of every acquisition through this template's API (and so {@code @DistributedLock}),
     * release, loss and watchdog renewal: for metrics and tracing. The {@code Lock} views are not observed.
     */
    @Override
    public void addObserver(LockObserver observer) {
        context.activity.addObserver(Objects.requireNonNull(observer, "observer"));
    }

    @Override
    public RedisLockConfig config() {
        return config;
    }

    /** This client's random id (128 bits, hex); the Redis owner of a lock is this id plus the thread. */
    @Override
    public String clientId() {
        return context.clientId;
    }

    /** What this client holds and does in this JVM now: local locks, renewals, the release subscription. */
    @Override
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

    /**
     * Stops the watchdog and the release subscription. Held locks are not released: they expire with their lease,
     * unless their holder releases them, which still works while the connection factory runs. New acquisitions throw
     * {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (context.closeOnce()) {
            subscriber.close();
        }
    }

    /**
     * Gives a held exclusive lock, acquired with a fixed lease ({@link LockOptions#withLease}), a new fixed lease of
     * {@code lease} from now and a new minimum hold of {@code holdAtLeast} from now ({@code null}: none), replacing
     * the ones it had: what ShedLock's {@code SimpleLock.extend(lockAtMostFor, lockAtLeastFor)} asks of a lock
     * provider. Called by the thread that acquired it; the fencing token stays the same.
     *
     * @return whether the lock is extended; false when it is no longer held (released, lost, or its lease ran out:
     *         it is then marked lost, and its release throws {@link LockLostException})
     * @throws IllegalArgumentException for a handle of another lock type, one renewed by the watchdog,
     *         or a minimum hold longer than the lease
     * @throws IllegalMonitorStateException when called by another thread than the one that acquired it
     */
    public boolean extend(LockHandle handle, Duration lease, @Nullable Duration holdAtLeast) {
        Objects.requireNonNull(handle, "handle");
        LockOptions.waitFor(Duration.ZERO).withLease(lease); // the lease's checks
        if (holdAtLeast != null) {
            LockOptions.waitFor(Duration.ZERO).withLease(lease).withHoldAtLeast(holdAtLeast);
        }
        if (!(LockActivity.unwrap(handle) instanceof LocalLockHandle local) || !local.isExclusive()) {
            throw new IllegalArgumentException("Only a handle on an exclusive lock of a RedisLockTemplate can be extended, not "
                    + handle);
        }
        return exclusive.exclusive.extend(local, lease, holdAtLeast);
    }

    private Optional<LockHandle> tryExclusive(String key, Duration wait, LockOptions options) {
        return exclusive.tryAcquire(key, wait, options);
    }

    private Optional<LockHandle> tryReadWrite(String key, LockType type, Duration wait, LockOptions options) {
        refuseHoldAtLeast(options, type.tag());
        return context.activity.acquire(options.name(), key, type,
                () -> readWrite.tryAcquire(key, type, wait, options.leaseTime()));
    }

    private Optional<LockHandle> tryFair(String key, Duration wait, LockOptions options) {
        refuseHoldAtLeast(options, "fair");
        return context.activity.acquire(options.name(), key, LockType.FAIR,
                () -> fair.tryAcquire(key, wait, options.leaseTime()));
    }

    private MultiLock.Acquisition multiFor(LockOptions options, LockType type) {
        Objects.requireNonNull(type, "type");
        return switch (type) {
            case EXCLUSIVE -> exclusive.acquireAll(options);
            case READ, WRITE -> {
                refuseHoldAtLeast(options, type.tag());
                yield (key, left, lease) -> context.activity.acquire(options.name(), key, type,
                        () -> readWrite.tryAcquire(key, type, left, lease));
            }
            default -> throw new IllegalArgumentException("acquireAll takes the exclusive, read or write lock, not "
                    + type);
        };
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

    /** A release of {@code key} was published to this client: wakes its contenders for the key, of every lock type. */
    private void wake(String key) {
        for (LockEngine engine : engines) {
            if (engine.wake(key)) {
                return;
            }
        }
    }

    private void wakeAll() {
        engines.forEach(LockEngine::wakeAll);
    }

    LocalLock localLock(String key) {
        return exclusive.locks.get(key);
    }

    Watchdog watchdog() {
        return context.watchdog;
    }
}
