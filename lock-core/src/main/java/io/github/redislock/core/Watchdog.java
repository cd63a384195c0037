package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the Redis holdings of every lock type this client holds without an explicit lease (exclusive, fair, read,
 * write, semaphore permits), finds lost ones, and tells the {@link LockLostListener}s.
 * <p>
 * Each holding is a {@link LocalLock} renewed with its type's {@link Renewer}: the exclusive lock's are the live
 * entries of its {@link LocalLocks}; the other types {@link #watch} each holding when it is acquired (with a fixed
 * lease too, so {@link RedisLockDiagnostics} counts it) and {@link #unwatch} it at its release.
 * One scheduler thread only decides: every twelfth of the lease ({@link #TICKS_PER_LEASE}) it looks at every renewed
 * holding and hands the ones last renewed a quarter of a lease ago or more to a pool (threads come and go with the
 * work), so each is renewed before a third of its lease has passed, never after (a renewal is due then); at most
 * one renewal in flight per holding, through a queue per Redis node ({@link NodeLanes}: up to
 * {@value #MAX_CALLS_PER_MASTER} calls in flight to one Cluster master, {@value #MAX_RENEWAL_THREADS} to one Redis,
 * and no more than the connection factory has pooled connections to a node ({@link PooledConnections}); the rest wait
 * their turn, none is dropped, and one node's queue never waits for another's). Every type's
 * {@link Renewer} has a batched call (unless replica acknowledgement is on, which acknowledges each renewal alone):
 * holdings of one type go in batches of up to {@value #MAX_BATCH}, one script call each, which reports per holding
 * whether it was renewed or is gone; in Redis Cluster a batch holds one master's holdings
 * ({@link Renewer.Many#nodeOf}) and goes out as one call to that master on Redis 7.0 and later (see
 * {@link BatchRenewal}), else as one call per hash slot, pipelined where the driver allows (a batch per slot where it
 * does not). A renewal sent only after waiting its turn counts its lease from when it was sent; one
 * whose lease ran out while it waited, or before its answer came, is marked lost. A renewal sent and not answered
 * within a quarter of the lease counts as failed and is sent again on another thread (the blocked one is left to
 * the client's own timeout), so a slow or frozen Redis node costs only the locks it holds; an answered renewal
 * cancels that resend, so the watchdog keeps nothing of a released holding. A holding whose local lease (less a safety
 * margin, see {@link LocalLock#safetyMarginNanos}) runs out is marked lost. This class decides when to renew and
 * resends; {@link RenewalAnswers} sends a renewal and records its answer, {@link LockLosses} tells of a loss (listeners
 * run on a thread of their own, one notification after another); background clean-up has its own pool too.
 */
final class Watchdog implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    /**
     * Renewal calls in flight at once to one Redis (not Cluster), or before the Cluster's topology is known; a renewal
     * beyond it waits its turn in a queue. Bounded, so that thousands of locks due in one tick (each renewed alone with
     * replica acknowledgement) do not start thousands of threads.
     */
    private static final int MAX_RENEWAL_THREADS = 256;
    /**
     * Renewal calls in flight at once to one Cluster master (each a batch of up to {@value #MAX_BATCH} of its holdings);
     * more wait their turn in that master's queue. A frozen master holds up at most this many threads and its own
     * queue, never another master's renewals.
     */
    static final int MAX_CALLS_PER_MASTER = 16;
    /**
     * Holdings renewed by one batched call at most: large enough that 100,000 held locks cost a thousand calls a
     * renewal period, not 100,000; small enough that one call keeps Redis (which runs one command at a time) from
     * its other clients for a few hundred µs. At 1,000 a call took 2.3 ms on average on one Redis and 6.3 ms on a
     * Cluster master (S10, benchmarks-scale.md), a pause every other client of that Redis waited behind.
     */
    static final int MAX_BATCH = 100;
    /** At most one warning of unanswered renewals sent again in this long ({@link #warnResend}). */
    private static final long RESEND_WARNING_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How often a lease the scheduler looks at the holdings. A holding is renewed at the first look a quarter of its lease
     * or more after its last renewal: before its renewal is due (a third of the lease), one look early at the most.
     */
    static final int TICKS_PER_LEASE = 12;
    private static final int BACKGROUND_THREADS = 4;
    private static final long IDLE_SECONDS = 30;

    /** The exclusive lock's entries and how they are renewed, from {@link #renewExclusive} on. */
    private volatile Collection<LocalLock> exclusiveLocks = List.of();
    private volatile Renewer exclusiveRenewer = new Renewer(LockType.EXCLUSIVE, (key, owner, lease) -> false);
    /** The holdings of the other lock types, from acquisition to release, with how each is renewed. */
    private final ConcurrentHashMap<LocalLock, Renewer> watched = new ConcurrentHashMap<>();
    private final long renewalTimeoutNanos;
    private final ScheduledThreadPoolExecutor scheduler;
    private final ThreadPoolExecutor renewals;
    /** The renewals of each Redis node (Cluster master), queued and capped node by node, on the pool above. */
    private final NodeLanes lanes;
    /** Background work (clean-up, grant confirmations), queued and capped node by node like the renewals. */
    private final ThreadPoolExecutor background;
    private final NodeLanes backgroundLanes;
    private final LockLosses losses = new LockLosses();
    private final RenewalAnswers answers;
    /** Told of every renewal's outcome and every loss, on the thread that saw it; for metrics and health. */
    private volatile Events events = Events.NONE;
    /** When {@link #warnResend} last logged (0: never), and the resends since then: guarded by this. */
    private long loggedResendAtNanos;
    private int unloggedResends;
    private long unloggedResendLocks;

    /**
     * @param callsPerNode how many calls to one Redis node the connection factory runs at once
     *        ({@link PooledConnections#callsAtOnce}), {@link Integer#MAX_VALUE} when the renewals borrow no connection
     *        of their own: a renewal thread more would only wait for a connection, spinning on the CPU while one is
     *        being made, which to a frozen Redis is all the time
     */
    Watchdog(Duration lease, int callsPerNode) {
        this.renewalTimeoutNanos = lease.toNanos() / 4;
        this.scheduler = new ScheduledThreadPoolExecutor(1, daemon("redis-lock-watchdog", false));
        this.scheduler.setRemoveOnCancelPolicy(true);
        this.renewals = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_SECONDS, TimeUnit.SECONDS,
                new SynchronousQueue<>(), daemon("redis-lock-renewal", true));
        this.lanes = new NodeLanes(renewals, Math.min(MAX_RENEWAL_THREADS, callsPerNode),
                Math.min(MAX_CALLS_PER_MASTER, callsPerNode));
        this.background = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_SECONDS, TimeUnit.SECONDS,
                new SynchronousQueue<>(), daemon("redis-lock-cleanup", true));
        this.backgroundLanes = new NodeLanes(background, BACKGROUND_THREADS, BACKGROUND_THREADS);
        this.answers = new RenewalAnswers(this);
        long tick = Math.max(1, lease.toNanos() / TICKS_PER_LEASE);
        scheduler.scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.NANOSECONDS);
    }

    void addLockLostListener(LockLostListener listener) {
        losses.addListener(listener);
    }

    /** What the watchdog saw, as it saw it: must be quick and not throw. */
    interface Events {

        Events NONE = new Events() {
            @Override
            public void renewal(LocalLock lock, LockObserver.RenewalOutcome outcome) {
            }

            @Override
            public void lost(LocalLock lock, String reason) {
            }
        };

        /** A renewal of {@code lock}'s current holding ended so. */
        void renewal(LocalLock lock, LockObserver.RenewalOutcome outcome);

        /** {@code lock}'s holding was marked lost. */
        void lost(LocalLock lock, String reason);
    }

    /**
     * Renews the exclusive lock's holdings from now on, as its engine is built.
     *
     * @param locks a live view of the exclusive lock's local locks, whose holdings come and go with them
     * @param renewer how their holdings are renewed
     */
    void renewExclusive(Collection<LocalLock> locks, Renewer renewer) {
        this.exclusiveRenewer = renewer;
        this.exclusiveLocks = locks;
    }

    void setEvents(Events events) {
        this.events = events;
    }

    Events events() {
        return events;
    }

    /**
     * Watches a holding of a type other than the exclusive lock from its acquisition on: renewed with
     * {@code renewer} while its {@link LocalLock.Holding#renewing()} says so, counted by the diagnostics either way.
     */
    void watch(LocalLock holding, Renewer renewer) {
        watched.put(holding, renewer);
    }

    /** Stops watching a holding: it was released (or never taken). */
    void unwatch(LocalLock holding) {
        watched.remove(holding);
    }

    /** Calls {@code action} with every holding of this client, of every type (an exclusive entry may hold none). */
    void forEachHolding(BiConsumer<LocalLock, Renewer> action) {
        for (LocalLock lock : exclusiveLocks) {
            action.accept(lock, exclusiveRenewer);
        }
        watched.forEach(action);
    }

    Renewer exclusiveRenewer() {
        return exclusiveRenewer;
    }

    /**
     * Runs clean-up work (undoing a request whose reply was lost, say) off the caller's thread, on the background
     * pool after {@code delayMillis} (the scheduler thread only hands it over), in the queue of the Redis node
     * {@code node} ({@code null}: the one Redis, or a Cluster master not known yet): at most {@value #BACKGROUND_THREADS} tasks of one node run at once, and
     * a frozen Cluster master, whose calls each block for the driver's timeout, holds up only its own node's queue, never
     * the confirmation of a grant on another master. After a delay the scheduler thread first asks {@code stillNeeded}
     * (which must be quick) and drops the task if it says no, without waking a pool thread.
     */
    void runInBackground(String node, BooleanSupplier stillNeeded, Runnable task, long delayMillis) {
        if (delayMillis <= 0) {
            backgroundLanes.submit(node, task);
        } else {
            scheduler.schedule(() -> {
                if (stillNeeded.getAsBoolean()) {
                    backgroundLanes.submit(node, task);
                }
            }, delayMillis, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        lanes.close();
        renewals.shutdownNow();
        background.shutdown(); // the tasks queued in a node's lane still run, on the lane's threads
        losses.close();
    }

    private void tick() {
        try {
            Map<BatchKey, List<Due>> batches = new HashMap<>();
            TickClock clock = new TickClock();
            forEachHolding((lock, renewer) -> {
                Due due = check(lock, renewer, clock.now());
                if (due == null) {
                    return;
                }
                if (renewer.many() == null) {
                    dispatch(List.of(due));
                    clock.read();
                    return;
                }
                BatchKey key = new BatchKey(renewer.many(), renewer.many().nodeOf(lock.key),
                        renewer.many().batchOf(lock.key), due.holding().leaseNanos());
                List<Due> batch = batches.computeIfAbsent(key, k -> new ArrayList<>());
                batch.add(due);
                if (batch.size() == MAX_BATCH) {
                    dispatch(batch);
                    batches.remove(key);
                    clock.read();
                }
            });
            batches.values().forEach(this::dispatch);
        } catch (Throwable e) { // a periodic task that throws is never run again: keep the watchdog alive
            log.error("The lock watchdog's tick failed unexpectedly", e);
        }
    }

    private static final int LOOKS_PER_CLOCK_READ = 64;

    /**
     * The clock as one tick's look at the holdings reads it: again every {@value #LOOKS_PER_CLOCK_READ} holdings and
     * after each renewal it hands over, so a holding is never seen more than a few µs younger than it is. (Reading it
     * twice per holding was a fifth of a look's CPU with 100,000 held locks on a VM's clock.)
     */
    private static final class TickClock {

        private long now = System.nanoTime();
        private int looks;

        long now() {
            if (++looks == LOOKS_PER_CLOCK_READ) {
                read();
            }
            return now;
        }

        void read() {
            looks = 0;
            now = System.nanoTime();
        }
    }

    /**
     * The holding to renew now, or {@code null}; marks it lost when its local lease ran out.
     *
     * @param now the clock as the tick last read it
     */
    private Due check(LocalLock lock, Renewer renewer, long now) {
        LocalLock.Holding holding = lock.holding;
        if (holding == null || !holding.renewing() || lock.lostReason != null) {
            return null;
        }
        if (lock.leaseRanOut(now)) {
            String invalid = lock.invalidReason(); // the reason, as of now
            if (invalid != null) {
                markLost(lock, renewer, holding, invalid);
            }
        } else if (now - lock.renewedAtNanos() >= holding.leaseNanos() / 3 - holding.leaseNanos() / TICKS_PER_LEASE
                && !lock.renewalInFlight(holding)) { // most holdings at most looks are not due: the clock first
            return new Due(lock, renewer, holding);
        }
        return null;
    }

    /**
     * Sends one renewal for the holdings of {@code due} that have none in flight: a batch with the renewer's
     * {@link Renewer#many} call, else (a single holding) its {@link Renewer#call}.
     */
    private void dispatch(List<Due> due) {
        long sent = System.nanoTime();
        List<Due> claimed = new ArrayList<>(due.size());
        for (Due holding : due) {
            if (holding.lock().renewalSent(holding.holding(), sent)) {
                claimed.add(holding);
            }
        }
        if (claimed.isEmpty()) {
            return;
        }
        Batch batch = new Batch(claimed, sent);
        Due first = claimed.get(0);
        String node = first.renewer().many() == null ? null : first.renewer().many().nodeOf(first.lock().key);
        try {
            batch.timeout = scheduler.schedule(() -> timedOut(batch), renewalTimeoutNanos, TimeUnit.NANOSECONDS);
            lanes.submit(node, () -> renew(batch));
        } catch (RejectedExecutionException e) { // closed
            batch.cancelTimeout();
            claimed.forEach(holding -> holding.lock().renewalEnded(holding.holding(), sent));
        }
    }

    private void renew(Batch queued) {
        queued.started = true;
        try {
            Batch batch = stillToSend(queued);
            if (batch == null) {
                return;
            }
            Due first = batch.holdings.get(0);
            if (first.renewer().many() == null) {
                answers.renew(first.lock(), first.renewer(), first.holding(), batch.sent);
            } else {
                answers.renewMany(batch);
            }
        } finally {
            queued.cancelTimeout(); // answered: nothing to resend, and the scheduler lets go of the holdings
        }
    }

    /**
     * The holdings of {@code queued} to send now that its turn came: those still waiting for this very renewal (not
     * answered, resent, released or lost meanwhile), and with their lease left; one whose lease ran out while it
     * waited is marked lost instead. {@code null} when none is left.
     */
    private Batch stillToSend(Batch queued) {
        List<Due> left = new ArrayList<>(queued.holdings.size());
        for (Due due : queued.holdings) {
            if (!due.lock().renewalInFlight(due.holding(), queued.sent) || due.lock().holding != due.holding()
                    || due.lock().lostReason != null) {
                continue;
            }
            if (due.lock().invalidReason() != null) {
                due.lock().renewalEnded(due.holding(), queued.sent);
                if (markLost(due.lock(), due.renewer(), due.holding(), "its renewal waited for its turn to Redis "
                        + "until its lease ran out")) {
                    events.renewal(due.lock(), LockObserver.RenewalOutcome.LOST);
                }
                continue;
            }
            left.add(due);
        }
        return left.isEmpty() ? null : left.size() == queued.holdings.size() ? queued : new Batch(left, queued.sent);
    }

    /** Sends one renewal of {@code holding} on the calling thread; see {@link RenewalAnswers#renew}. */
    void renew(LocalLock lock, Renewer renewer, LocalLock.Holding holding, long sent) {
        answers.renew(lock, renewer, holding, sent);
    }

    private void timedOut(Batch batch) {
        if (!batch.started) { // still waiting its turn in its node's queue: sending it again would only queue it twice
            for (Due due : batch.holdings) {
                if (due.lock().renewalInFlight(due.holding(), batch.sent) && due.lock().invalidReason() != null
                        && markLost(due.lock(), due.renewer(), due.holding(), "its renewal waited for its turn to Redis "
                                + "until its lease ran out")) {
                    events.renewal(due.lock(), LockObserver.RenewalOutcome.LOST);
                }
            }
            try {
                batch.timeout = scheduler.schedule(() -> timedOut(batch), renewalTimeoutNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) { // closed
            }
            return;
        }
        List<Due> resend = new ArrayList<>();
        for (Due due : batch.holdings) {
            LocalLock lock = due.lock();
            if (!lock.renewalEnded(due.holding(), batch.sent) || lock.holding != due.holding() || lock.lostReason != null) {
                continue; // answered, released or lost meanwhile
            }
            if (lock.invalidReason() != null) {
                if (markLost(lock, due.renewer(), due.holding(), "Redis did not answer its renewal within "
                        + TimeUnit.NANOSECONDS.toMillis(renewalTimeoutNanos) + "ms, and its lease ran out")) {
                    events.renewal(lock, LockObserver.RenewalOutcome.LOST);
                }
                continue;
            }
            events.renewal(lock, LockObserver.RenewalOutcome.FAILED);
            resend.add(due);
        }
        if (resend.isEmpty()) {
            return;
        }
        warnResend(resend);
        dispatch(resend);
    }

    /**
     * Logs a resend of unanswered renewals, one warning a second at most: a frozen Redis holding thousands of locks
     * leaves a batch of {@value #MAX_BATCH} unanswered after another, and the next warning counts the resends not
     * logged since the last.
     */
    private synchronized void warnResend(List<Due> resend) {
        unloggedResends++;
        unloggedResendLocks += resend.size();
        long now = System.nanoTime();
        if (loggedResendAtNanos != 0 && now - loggedResendAtNanos < RESEND_WARNING_INTERVAL_NANOS) {
            return;
        }
        long timeoutMillis = TimeUnit.NANOSECONDS.toMillis(renewalTimeoutNanos);
        if (unloggedResends > 1) {
            log.warn("Redis did not answer {} renewal calls ({} locks) within {}ms each since the last such warning; "
                    + "sending them again", unloggedResends, unloggedResendLocks, timeoutMillis);
        } else if (resend.size() == 1) {
            log.warn("Redis did not answer the renewal of {} within {}ms; sending it again",
                    resend.get(0).renewer().describe(resend.get(0).lock().key), timeoutMillis);
        } else {
            log.warn("Redis did not answer the renewal of {} locks within {}ms; sending it again", resend.size(),
                    timeoutMillis);
        }
        loggedResendAtNanos = now;
        unloggedResends = 0;
        unloggedResendLocks = 0;
    }

    /**
     * Marks {@code holding} lost and tells the listeners; nothing if it was released, replaced or marked lost meanwhile.
     * Every loss goes through here, also one found outside a renewal (a fair hand-over whose confirmation found it
     * gone), so each is logged, counted and told to the listeners once.
     *
     * @return whether it was marked lost now
     */
    boolean markLost(LocalLock lock, Renewer renewer, LocalLock.Holding holding, String reason) {
        if (!lock.lose(holding, reason)) {
            return false;
        }
        lock.renewalDropped(holding);
        events.lost(lock, reason);
        losses.tell(lock, renewer, holding, reason);
        return true;
    }

    static ThreadFactory daemon(String name, boolean numbered) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, numbered ? name + "-" + count.incrementAndGet() : name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * Which batch a due holding joins: its renewer's batched call, the Redis node that serves it, the group of that
     * node's holdings one batch may take ({@link Renewer.Many#batchOf}), and its lease (a batched call sends one lease
     * for all its holdings; the watchdog's are the same but for a hand-over adopted with a lease of its own).
     */
    private record BatchKey(Renewer.Many many, String node, int group, long leaseNanos) {
    }

    /** A holding due for renewal, as the tick read it. */
    record Due(LocalLock lock, Renewer renewer, LocalLock.Holding holding) {
    }

    /** Holdings renewed by one call (one holding when its renewer has no batched call), sent at {@code sent}. */
    static final class Batch {

        final List<Due> holdings;
        final long sent;
        /** The resend after a quarter lease unanswered; cancelled (and dropped by the scheduler) once answered. */
        volatile ScheduledFuture<?> timeout;
        /** Whether its turn in its node's queue came; until then it is not resent, only checked again later. */
        volatile boolean started;

        Batch(List<Due> holdings, long sent) {
            this.holdings = holdings;
            this.sent = sent;
        }

        void cancelTimeout() {
            ScheduledFuture<?> pending = timeout;
            if (pending != null) {
                pending.cancel(false);
            }
        }
    }
}
