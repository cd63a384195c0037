package io.github.redislock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ShedLock's {@code LockProvider} on a {@link RedisLockTemplate}: {@code @SchedulerLock(name = "report")} takes the
 * engine's exclusive lock of the key {@code shedlock:report} (the prefix is a constructor argument), so one instance
 * runs each tick and the lock carries a fencing token, shows in diagnostics, metrics and {@code /actuator/locks}.
 * <p>
 * ShedLock's contract, as the engine keeps it:
 * <ul>
 * <li>never waits: one try ({@link LockOptions#tryOnce()}); empty when another owner holds the lock;</li>
 * <li>{@code lockAtMostFor} is the lease, fixed, not renewed by the watchdog: a job that runs longer loses the
 * lock;</li>
 * <li>{@code lockAtLeastFor} is the minimum hold ({@link LockOptions#withHoldAtLeast}): an unlock before then leaves
 * the lock in Redis, set to expire then;</li>
 * <li>{@code extend(lockAtMostFor, lockAtLeastFor)} (ShedLock's {@code LockExtender}, {@code KeepAliveLockProvider})
 * gives the held lock a new lease and minimum hold from now ({@link RedisLockTemplate#extend}); empty when the lock
 * was lost;</li>
 * <li>not reentrant: a second {@code lock} of a held name is empty, from any thread, as ShedLock expects.</li>
 * </ul>
 * The engine's locks belong to the thread that acquired them, while ShedLock may extend a lock from another thread
 * (its {@code KeepAliveLockProvider} does) and expects a second {@code lock} on the same thread to fail. So each held
 * lock is acquired, extended and released on a holder thread of this provider, which parks while the job runs: one
 * thread per lock held at the moment. {@link #close()} stops idle holder threads (Spring calls it on shutdown).
 * <p>
 * An unlock that finds the lock already lost (the job ran past {@code lockAtMostFor}, or Redis lost the key) logs a
 * warning naming the lock instead of failing the job, as ShedLock's own providers do not fail it either; the next
 * tick runs as usual. Redis failures throw ShedLock's {@link LockException} with the engine's exception as cause.
 */
public final class RedisLockTemplateLockProvider implements ExtensibleLockProvider, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLockTemplateLockProvider.class);

    /** The key prefix of {@link #RedisLockTemplateLockProvider(RedisLockTemplate)}. */
    public static final String DEFAULT_KEY_PREFIX = "shedlock:";

    /** What ShedLock's locks are named in metrics and tracing. */
    private static final String METRICS_NAME = "shedlock";

    private final RedisLockTemplate template;
    private final String keyPrefix;
    private final ExecutorService holders;

    /** Locks named {@code shedlock:} plus the ShedLock name. */
    public RedisLockTemplateLockProvider(RedisLockTemplate template) {
        this(template, DEFAULT_KEY_PREFIX);
    }

    /**
     * @param keyPrefix put before each ShedLock name to make the lock's key ({@code ""} for none), e.g. to keep the
     *        jobs of two environments sharing a Redis apart
     */
    public RedisLockTemplateLockProvider(RedisLockTemplate template, String keyPrefix) {
        this.template = Objects.requireNonNull(template, "template");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.holders = Executors.newCachedThreadPool(holderThreads());
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        String key = keyPrefix + configuration.getName();
        Instant now = ClockProvider.now();
        LockOptions options = LockOptions.tryOnce().withName(METRICS_NAME)
                .withLease(leaseUntil(now, configuration.getLockAtMostUntil()));
        Duration holdAtLeast = holdUntil(now, configuration.getLockAtLeastUntil(), options.leaseTime());
        LockOptions withHold = holdAtLeast == null ? options : options.withHoldAtLeast(holdAtLeast);
        HolderThread holder = new HolderThread(holders, key);
        Holding holding = new Holding(holder);
        boolean acquired;
        try {
            acquired = holder.call(() -> holding.acquired(template.tryAcquire(key, withHold), options.leaseTime()));
        } catch (RuntimeException e) {
            holder.stop();
            throw new LockException("Could not lock '" + configuration.getName() + "' in Redis", e);
        }
        if (!acquired) {
            holder.stop();
            return Optional.empty();
        }
        return Optional.of(new HeldLock(configuration, holding));
    }

    /** Stops the holder threads once their locks are unlocked; held locks stay held until unlocked or their lease ends. */
    @Override
    public void close() {
        holders.shutdown();
    }

    /** The lease from {@code now} to {@code until}: at least a millisecond. */
    private static Duration leaseUntil(Instant now, Instant until) {
        Duration lease = Duration.between(now, until);
        return lease.toMillis() < 1 ? Duration.ofMillis(1) : lease;
    }

    /** The minimum hold from {@code now} to {@code until}, at most {@code lease}; {@code null} for none. */
    private static @Nullable Duration holdUntil(Instant now, Instant until, Duration lease) {
        Duration hold = Duration.between(now, until);
        if (hold.toMillis() < 1) {
            return null;
        }
        return hold.compareTo(lease) > 0 ? lease : hold;
    }

    private static ThreadFactory holderThreads() {
        AtomicLong count = new AtomicLong();
        return runnable -> {
            Thread thread = new Thread(runnable, "shedlock-holder-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Until when ({@link System#nanoTime()}) this JVM counts a lease from now as held: the engine's view of it. */
    private static long heldUntilNanos(Duration lease) {
        long leaseNanos = lease.toNanos();
        long margin = Math.min(leaseNanos / 2, leaseNanos / 100 + TimeUnit.MILLISECONDS.toNanos(2));
        return System.nanoTime() + leaseNanos - margin;
    }

    /**
     * The engine's holding of one ShedLock lock, on its holder thread, through every extension: what the ShedLock
     * lock objects of its acquisition and extensions share.
     */
    private static final class Holding {

        private final HolderThread holder;
        /** Set on the holder thread; read by the others after a call there. */
        private volatile @Nullable LockHandle handle;
        /** Whether the handle was released; touched on the holder thread only (or the caller's once it ended). */
        private boolean released;

        Holding(HolderThread holder) {
            this.holder = holder;
        }

        /** On the holder thread: keeps the handle, if any, until the unlock or the end of {@code lease}. */
        boolean acquired(Optional<LockHandle> acquired, Duration lease) {
            if (acquired.isEmpty()) {
                return false;
            }
            handle = acquired.get();
            holder.expireAt(heldUntilNanos(lease), this::expire);
            return true;
        }

        /** On the holder thread: the engine's lease ended before the unlock; let go of the lock in this JVM too. */
        private void expire() {
            release("its lockAtMostFor ended before it was unlocked.");
        }

        /** On the holder thread: releases the handle once, warning when it was lost. */
        void release(@Nullable String whyLost) {
            if (released) {
                return;
            }
            released = true;
            LockHandle held = Objects.requireNonNull(handle, "released before it was acquired");
            try {
                held.release();
            } catch (LockLostException e) {
                log.warn("ShedLock lock '{}' was lost before it was unlocked: {} Another instance may have run the "
                        + "job meanwhile; give it a longer lockAtMostFor if the job can run that long", held.key(),
                        whyLost != null ? whyLost : e.getMessage());
            }
        }
    }

    /** One ShedLock lock object: invalid once unlocked or extended (ShedLock's rule). */
    private final class HeldLock extends AbstractSimpleLock {

        private final Holding holding;

        HeldLock(LockConfiguration configuration, Holding holding) {
            super(configuration);
            this.holding = holding;
        }

        @Override
        protected void doUnlock() {
            holding.holder.callLast(() -> {
                holding.release(null);
                return null;
            });
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration extended) {
            Instant now = ClockProvider.now();
            Duration lease = leaseUntil(now, extended.getLockAtMostUntil());
            Duration holdAtLeast = holdUntil(now, extended.getLockAtLeastUntil(), lease);
            boolean held;
            try {
                held = holding.holder.call(() -> {
                    if (holding.released || !template.extend(Objects.requireNonNull(holding.handle), lease, holdAtLeast)) {
                        holding.release(null); // lost: let go of it in this JVM, so the next tick can take it
                        return false;
                    }
                    holding.holder.expireAt(heldUntilNanos(lease), holding::expire);
                    return true;
                });
            } catch (RuntimeException e) {
                throw new LockException("Could not extend lock '" + extended.getName() + "' in Redis", e);
            }
            if (!held) {
                holding.holder.stop();
                return Optional.empty();
            }
            return Optional.of(new HeldLock(extended, holding));
        }
    }
}
