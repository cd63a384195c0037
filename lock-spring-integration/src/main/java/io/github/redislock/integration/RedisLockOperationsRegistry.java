package io.github.redislock.integration;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLock;
import org.jspecify.annotations.Nullable;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link LockRegistry} on the lock engine, in place of Spring Integration's
 * {@code RedisLockRegistry}: it implements the same interfaces ({@link ExpirableLockRegistry} and
 * {@link RenewableLockRegistry} of {@link DistributedLock}), so code and {@code LockRegistryLeaderInitiator} written
 * against them work unchanged, and its locks are the engine's exclusive locks of {@link LockOperations#lock(String)}:
 * <ul>
 * <li>reentrant per thread; only the thread that locked may unlock;</li>
 * <li>watchdog-renewed while held ({@code lock()}, {@code tryLock(...)}): a crashed JVM's lock frees itself one
 * watchdog lease after its last renewal; {@link DistributedLock#lock(Duration)} and
 * {@link DistributedLock#tryLock(Duration, Duration)} take a fixed lease instead, not renewed;</li>
 * <li>fenced: {@link #fencingToken(Object)} is the token of the calling thread's holding, strictly greater than every
 * earlier one of the key, to pass to storage that must reject a stale holder;</li>
 * <li>waited for on Redis pub/sub, not by polling;</li>
 * <li>a lost lock is never silent: a nested {@code tryLock} or the {@code unlock} of a lock that was lost (its lease
 * ran out without a renewal, or Redis no longer had it) throws {@link LockLostException}, which says the protected
 * work may have overlapped another holder's.</li>
 * </ul>
 * A lock of key {@code k} is the engine's lock of {@code <registryKey>:k} (of {@code k} itself without a registry
 * key), so it excludes {@code @DistributedLock} and {@link LockOperations} users of the same key. Acquisitions are
 * observed like the template's own: they show in metrics, tracing and diagnostics named {@value #METRIC_NAME}.
 * <p>
 * Only {@code String} keys are supported, as in Spring Integration's registry. The lock objects are cached per key;
 * {@link #expireUnusedOlderThan(long)} drops those not held and not obtained for a while.
 */
public final class RedisLockOperationsRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    /** The name of this registry's acquisitions in metrics, tracing and diagnostics. */
    public static final String METRIC_NAME = "spring-integration";

    /**
     * The wait of {@code lock()}: the engine waits without bound for anything over a century. Not
     * {@link LockOptions#WAIT_FOREVER}, whose {@link LockNotAcquiredException} for an interrupted wait fails to print
     * the wait time ({@code ArithmeticException} from {@code Duration.toMillis}).
     */
    private static final Duration UNBOUNDED = ChronoUnit.CENTURIES.getDuration().multipliedBy(2);

    private final LockOperations locks;
    private final String registryKey;
    /** The lock objects handed out, by engine key. */
    private final ConcurrentMap<String, EngineLock> obtained = new ConcurrentHashMap<>();
    /** What the holding thread holds through this registry, by engine key; removed with the outermost unlock. */
    private final ConcurrentMap<String, Holding> holdings = new ConcurrentHashMap<>();

    /** A registry whose lock keys are the engine's keys as given. */
    public RedisLockOperationsRegistry(LockOperations locks) {
        this(locks, "");
    }

    /**
     * A registry whose lock of key {@code k} is the engine's lock of {@code <registryKey>:k}, like Spring
     * Integration's {@code RedisLockRegistry(connectionFactory, registryKey)}.
     *
     * @param registryKey a prefix that keeps this registry's locks apart from others'; empty for none
     */
    public RedisLockOperationsRegistry(LockOperations locks, String registryKey) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.registryKey = Objects.requireNonNull(registryKey, "registryKey");
    }

    /**
     * The lock of {@code lockKey}, the same object for the same key until it is expired unused.
     *
     * @throws IllegalArgumentException when the key is not a {@code String}, or not a valid lock key (blank, too long,
     *         with control characters)
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String key = engineKey(lockKey);
        EngineLock lock = obtained.computeIfAbsent(key, k -> new EngineLock(locks.lock(k)));
        lock.lastObtainedMillis = System.currentTimeMillis();
        return lock;
    }

    /**
     * The fencing token of the calling thread's holding of {@code lockKey} through this registry: strictly greater
     * than every token handed out earlier for the key, by any client, and the same for nested holdings. Pass it with
     * every write to storage that can keep the highest token it saw and refuse lower ones: a holder that lost its
     * lock (a pause longer than the lease) is then refused.
     *
     * @return empty when the calling thread does not hold the lock through this registry
     */
    public OptionalLong fencingToken(Object lockKey) {
        Holding holding = heldByCurrentThread(engineKey(lockKey));
        return holding == null ? OptionalLong.empty() : OptionalLong.of(holding.outermost().fencingToken());
    }

    /**
     * Removes the cached lock objects not held and not obtained for {@code age} milliseconds. A lock object obtained
     * before and used after still works: the holding lives in the engine and in this registry, not in the object.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        obtained.entrySet().removeIf(entry -> now - entry.getValue().lastObtainedMillis > age
                && !holdings.containsKey(entry.getKey()));
    }

    /**
     * Renews the lock of {@code lockKey} that the calling thread holds. A lock taken with a time-to-live gets that
     * time-to-live again from now (on a {@link RedisLockTemplate}); one taken without is renewed by the watchdog every
     * third of its lease while it is held, so this only checks that it still is.
     *
     * @throws IllegalStateException when the calling thread does not hold it through this registry;
     *         {@link LockLostException} when it was lost
     * @throws UnsupportedOperationException when it was taken with a fixed time-to-live on a backend that cannot
     *         extend one (Redlock)
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, null);
    }

    /**
     * Like {@link #renewLock(Object)}: a lock taken with a time-to-live gets {@code timeToLive} from now ({@code null}:
     * the one it was taken with); a lock renewed by the watchdog keeps the watchdog's lease, whatever
     * {@code timeToLive} says.
     */
    @Override
    public void renewLock(Object lockKey, @Nullable Duration timeToLive) {
        String key = engineKey(lockKey);
        Holding holding = heldByCurrentThread(key);
        if (holding == null) {
            throw new IllegalStateException("Could not renew lock '" + key + "': it is not held by thread '"
                    + Thread.currentThread().getName() + "' through this registry");
        }
        LockHandle outermost = holding.outermost();
        if (holding.fixedLease != null) {
            // a fixed lease gets a new one from now: the given time-to-live, else the one it was taken with
            if (!(locks instanceof RedisLockTemplate template)) {
                throw new UnsupportedOperationException("Lock '" + key + "' was taken with a time-to-live of "
                        + holding.fixedLease + " on " + locks.getClass().getSimpleName() + ", which cannot extend a "
                        + "fixed lease: take it without a time-to-live (lock(), tryLock(...)) and the watchdog renews it");
            }
            if (!template.extend(outermost, timeToLive != null ? timeToLive : holding.fixedLease, null)) {
                throw new LockLostException(key, outermost.fencingToken(), "it was lost before it was renewed");
            }
            return;
        }
        if (!outermost.isHeld()) {
            throw new LockLostException(key, outermost.fencingToken(), "it was lost before it was renewed");
        }
    }

    @Override
    public String toString() {
        return "RedisLockOperationsRegistry[" + (registryKey.isEmpty() ? "no registry key" : registryKey) + "]";
    }

    private String engineKey(Object lockKey) {
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("Only String lock keys are supported, not "
                    + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        return registryKey.isEmpty() ? key : registryKey + ":" + key;
    }

    private @Nullable Holding heldByCurrentThread(String key) {
        Holding holding = holdings.get(key);
        return holding != null && holding.thread == Thread.currentThread() ? holding : null;
    }

    /** The handles one thread holds a key with, innermost first; touched by that thread only. */
    private static final class Holding {

        final Thread thread = Thread.currentThread();
        final Deque<LockHandle> handles = new ArrayDeque<>();
        /** The outermost acquisition's fixed lease; {@code null} when the watchdog renews it. */
        final @Nullable Duration fixedLease;

        Holding(@Nullable Duration fixedLease) {
            this.fixedLease = fixedLease;
        }

        LockHandle outermost() {
            return handles.getLast();
        }
    }

    /**
     * The lock object of one key: each acquisition is an acquisition of the engine's lock with options, whose handle
     * the thread keeps until the matching {@code unlock}.
     */
    private final class EngineLock implements DistributedLock {

        private final RedisLock lock;
        volatile long lastObtainedMillis;

        EngineLock(RedisLock lock) {
            this.lock = lock;
        }

        @Override
        public void lock() {
            lockUninterruptibly(LockOptions.waitFor(UNBOUNDED));
        }

        @Override
        public void lock(Duration timeToLive) {
            lockUninterruptibly(LockOptions.waitFor(UNBOUNDED).withLease(timeToLive));
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            acquire(LockOptions.waitFor(UNBOUNDED));
        }

        @Override
        public boolean tryLock() {
            try {
                return acquire(LockOptions.tryOnce());
            } catch (InterruptedException e) {
                // only when Redis failed while the thread was interrupted: not acquired
                Thread.currentThread().interrupt();
                return false;
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return acquire(LockOptions.waitFor(Duration.ofNanos(Math.max(0, unit.toNanos(time)))));
        }

        @Override
        public boolean tryLock(Duration waitTime, Duration timeToLive) throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return acquire(LockOptions.waitFor(waitTime.isNegative() ? Duration.ZERO : waitTime).withLease(timeToLive));
        }

        /**
         * Releases the calling thread's latest acquisition; the Redis lock with the outermost.
         *
         * @throws IllegalMonitorStateException when the calling thread does not hold it
         * @throws LockLostException when the lock had been lost: the work it protected may have overlapped another
         *         holder's
         */
        @Override
        public void unlock() {
            Holding holding = heldByCurrentThread(lock.key());
            if (holding == null) {
                throw new IllegalMonitorStateException("Lock '" + lock.key() + "' is not held by thread '"
                        + Thread.currentThread().getName() + "' through this registry");
            }
            LockHandle latest = holding.handles.pop();
            if (holding.handles.isEmpty()) {
                // before the release: once Redis lets go, another thread of this JVM may take it
                holdings.remove(lock.key(), holding);
            }
            latest.release();
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
        }

        @Override
        public String toString() {
            return "RedisLockOperationsRegistry.Lock[" + lock.key() + "]";
        }

        private void lockUninterruptibly(LockOptions options) {
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        if (acquire(options)) {
                            return;
                        }
                    } catch (InterruptedException e) {
                        interrupted = true; // lock() keeps waiting, and tells of the interrupt afterwards
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * One acquisition with {@code options}, kept for the matching unlock.
         *
         * @return false when another owner kept the lock for the wait time
         * @throws InterruptedException when the thread was interrupted while waiting
         * @throws LockNotAcquiredException when Redis could not be reached
         * @throws LockLostException for a nested acquisition of a lock that was lost
         */
        private boolean acquire(LockOptions options) throws InterruptedException {
            Optional<LockHandle> acquired;
            try {
                acquired = lock.tryAcquire(options.withName(METRIC_NAME));
            } catch (LockNotAcquiredException e) {
                if (Thread.interrupted()) { // the engine ends a wait on interrupt this way, the flag set
                    InterruptedException interrupted = new InterruptedException("interrupted while waiting for lock '"
                            + lock.key() + "'");
                    interrupted.initCause(e);
                    throw interrupted;
                }
                throw e;
            }
            if (acquired.isEmpty()) {
                return false;
            }
            Holding holding = holdings.computeIfAbsent(lock.key(), k -> new Holding(options.leaseTime()));
            holding.handles.push(acquired.get());
            return true;
        }
    }
}
