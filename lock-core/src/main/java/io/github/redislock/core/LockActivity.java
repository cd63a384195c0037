package io.github.redislock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.redislock.core.LockObserver.Acquisition;
import io.github.redislock.core.LockObserver.LockEvent;
import io.github.redislock.core.LockObserver.RenewalOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the template's callers hold and wait for now, and the {@link LockObserver}s told about it. Every
 * acquisition through the template's API passes through {@link #acquire}: it is listed as a waiter while it waits,
 * its handle is wrapped so its release is seen, and it is listed as held until then.
 */
final class LockActivity implements Watchdog.Events {

    private static final Logger log = LoggerFactory.getLogger(LockActivity.class);

    private final List<LockObserver> observers = new CopyOnWriteArrayList<>();
    private final Set<Held> held = ConcurrentHashMap.newKeySet();
    /**
     * The held entries by the lease they hold, for naming a renewal or loss the watchdog reports: a map lookup, as
     * the watchdog may report on 100,000 leases a renewal period. Nested acquisitions of one lease are a list.
     */
    private final ConcurrentHashMap<LocalLock, List<Held>> heldByLease = new ConcurrentHashMap<>();
    private final Set<Waiter> waiters = ConcurrentHashMap.newKeySet();
    /** Released acquisitions whose lock stays in Redis until their minimum hold ({@code holdAtLeast}) ends. */
    private final Set<HeldPastRelease> heldPastRelease = ConcurrentHashMap.newKeySet();

    /** Throws when the template is closed, given the key about to be acquired. */
    private final Consumer<String> openCheck;

    LockActivity(Consumer<String> openCheck) {
        this.openCheck = openCheck;
    }

    void addObserver(LockObserver observer) {
        observers.add(observer);
    }

    /**
     * Runs one acquisition of the current thread, listing it as a waiter meanwhile and telling the observers how it
     * ended.
     *
     * @param acquisition the lock type's acquisition: a handle, or empty when another owner kept the lock
     * @return the handle, wrapped so its release is seen; empty when another owner kept the lock past the wait
     */
    Optional<LockHandle> acquire(String name, String key, LockType type, Supplier<Optional<? extends LockHandle>> acquisition) {
        openCheck.accept(key);
        LockEvent lock = new LockEvent(name == null ? LockObserver.UNNAMED : name, key, type);
        List<Acquisition> told = new ArrayList<>(observers.size());
        for (LockObserver observer : observers) {
            try {
                told.add(observer.acquiring(lock));
            } catch (RuntimeException e) {
                log.warn("LockObserver {} failed", observer, e);
            }
        }
        Waiter waiter = new Waiter(lock, Instant.now(), Thread.currentThread());
        waiters.add(waiter);
        long start = System.nanoTime();
        Optional<? extends LockHandle> handle;
        try {
            handle = acquisition.get();
        } catch (RuntimeException | Error e) {
            waiters.remove(waiter);
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            each(told, a -> a.notAcquired(waited, e instanceof LockNotAcquiredException && e.getCause() != null ? e.getCause() : e));
            throw e;
        }
        waiters.remove(waiter);
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        if (handle.isEmpty()) {
            each(told, a -> a.notAcquired(waited, null));
            return Optional.empty();
        }
        each(told, a -> a.acquired(waited));
        Held entry = new Held(lock, handle.get(), Instant.now(), System.nanoTime(), Thread.currentThread());
        held.add(entry);
        if (entry.handle instanceof Leased leased && leased.lease() != null) {
            heldByLease.compute(leased.lease(), (lease, entries) -> {
                List<Held> more = entries == null ? new ArrayList<>(1) : new ArrayList<>(entries);
                more.add(entry);
                return more;
            });
        }
        return Optional.of(handle.get() instanceof PermitHandle permit ? new ObservedPermitHandle(permit, entry)
                : new ObservedHandle(handle.get(), entry));
    }

    /** The watchdog tried to renew {@code lease}. */
    @Override
    public void renewal(LocalLock lease, RenewalOutcome outcome) {
        LockEvent lock = eventFor(lease);
        for (LockObserver observer : observers) {
            call(observer, o -> o.renewal(lock, outcome));
        }
    }

    /** The watchdog found {@code lease} lost. */
    @Override
    public void lost(LocalLock lease, String reason) {
        LockEvent lock = eventFor(lease);
        for (LockObserver observer : observers) {
            call(observer, o -> o.lost(lock, reason));
        }
    }

    /**
     * The locks held now through this template, oldest first: by their holders, and released ones that
     * {@code holdAtLeast} keeps in Redis until their minimum hold ends.
     */
    List<RedisLockDiagnostics.HeldLock> held() {
        long now = System.nanoTime();
        heldPastRelease.removeIf(h -> h.untilNanos - now <= 0);
        List<Held> all = new ArrayList<>(held);
        heldPastRelease.forEach(h -> all.add(h.held));
        return all.stream().sorted(Comparator.comparingLong(Held::sinceNanos)).map(h -> {
            HeldPastRelease past = pastRelease(h);
            if (past != null) {
                return new RedisLockDiagnostics.HeldLock(h.lock.key(), h.lock.name(), h.lock.type(), h.handle.fencingToken(),
                        h.since, Duration.ofNanos(Math.max(0, past.untilNanos - now)), false, h.thread.getName(),
                        Duration.ZERO, past.until);
            }
            LocalLock lease = h.handle instanceof Leased leased ? leased.lease() : null;
            Duration left = lease == null || lease.holding == null ? null : Duration.ofNanos(Math.max(0, lease.leaseLeftNanos()));
            boolean renewing = lease != null && lease.isRenewed();
            Duration overdue = renewing ? Duration.ofNanos(Math.max(0, lease.renewalOverdueNanos())) : Duration.ZERO;
            return new RedisLockDiagnostics.HeldLock(h.lock.key(), h.lock.name(), h.lock.type(), h.handle.fencingToken(),
                    h.since, left, renewing, h.thread.getName(), overdue, null);
        }).toList();
    }

    private HeldPastRelease pastRelease(Held entry) {
        for (HeldPastRelease past : heldPastRelease) {
            if (past.held == entry) {
                return past;
            }
        }
        return null;
    }

    /** The acquisitions waiting now, oldest first. */
    List<RedisLockDiagnostics.Waiter> waiters() {
        return waiters.stream().sorted(Comparator.comparing(Waiter::since))
                .map(w -> new RedisLockDiagnostics.Waiter(w.lock.key(), w.lock.name(), w.lock.type(), w.since, w.thread.getName()))
                .toList();
    }

    /** The acquisition holding {@code lease}; one not acquired through the template's API (a {@code Lock} view) is unnamed. */
    private LockEvent eventFor(LocalLock lease) {
        List<Held> entries = heldByLease.get(lease);
        if (entries != null && !entries.isEmpty()) {
            return entries.get(0).lock;
        }
        return new LockEvent(LockObserver.UNNAMED, lease.key, LockType.EXCLUSIVE);
    }

    private void ended(Held entry) {
        if (!held.remove(entry)) {
            return;
        }
        if (entry.handle instanceof Leased leased && leased.lease() != null) {
            heldByLease.computeIfPresent(leased.lease(), (lease, entries) -> {
                List<Held> rest = new ArrayList<>(entries);
                rest.remove(entry);
                return rest.isEmpty() ? null : rest;
            });
        }
        Duration heldFor = Duration.ofNanos(System.nanoTime() - entry.sinceNanos);
        for (LockObserver observer : observers) {
            call(observer, o -> o.released(entry.lock, heldFor));
        }
    }

    private static void each(List<Acquisition> acquisitions, Consumer<Acquisition> action) {
        for (Acquisition acquisition : acquisitions) {
            try {
                action.accept(acquisition);
            } catch (RuntimeException e) {
                log.warn("LockObserver {} failed", acquisition, e);
            }
        }
    }

    private static void call(LockObserver observer, Consumer<LockObserver> action) {
        try {
            action.accept(observer);
        } catch (RuntimeException e) {
            log.warn("LockObserver {} failed", observer, e);
        }
    }

    /** A handle whose holding is recorded in a {@link LocalLock}: its lease, for what {@link #held()} shows. */
    interface Leased {
        LocalLock lease();

        /**
         * After its release: until when ({@link System#nanoTime()}) the lock stays in Redis because of
         * {@code holdAtLeast}; 0 when the release ended the hold.
         */
        default long heldInRedisUntilNanos() {
            return 0;
        }
    }

    /** A released acquisition whose lock Redis keeps until {@code until}, its minimum hold. */
    private record HeldPastRelease(Held held, Instant until, long untilNanos) {
    }

    private record Waiter(LockEvent lock, Instant since, Thread thread) {
    }

    private record Held(LockEvent lock, LockHandle handle, Instant since, long sinceNanos, Thread thread) {

        // identity, not value: two nested acquisitions of one lock are two entries
        @Override
        public boolean equals(Object other) {
            return this == other;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    /** The lock type's handle inside {@code handle}, when it is one this activity handed out. */
    static LockHandle unwrap(LockHandle handle) {
        return handle instanceof ObservedHandle observed ? observed.delegate : handle;
    }

    /** The caller's handle: the lock type's, plus the bookkeeping of its release. */
    private class ObservedHandle implements LockHandle {

        final LockHandle delegate;
        private final Held entry;

        ObservedHandle(LockHandle delegate, Held entry) {
            this.delegate = delegate;
            this.entry = entry;
        }

        @Override
        public String key() {
            return delegate.key();
        }

        @Override
        public long fencingToken() {
            return delegate.fencingToken();
        }

        @Override
        public boolean isHeld() {
            return delegate.isHeld();
        }

        @Override
        public void release() {
            try {
                delegate.release();
            } catch (IllegalMonitorStateException e) { // another thread, or a second release: the hold goes on
                throw e;
            } catch (RuntimeException e) { // lost: the hold has ended all the same
                ended(entry);
                throw e;
            }
            ended(entry);
            long until = delegate instanceof Leased leased ? leased.heldInRedisUntilNanos() : 0;
            long left = until - System.nanoTime();
            if (until != 0 && left > 0) {
                heldPastRelease.add(new HeldPastRelease(entry, Instant.now().plusNanos(left), until));
            }
        }

        @Override
        public String toString() {
            return delegate.toString();
        }
    }

    private final class ObservedPermitHandle extends ObservedHandle implements PermitHandle {

        ObservedPermitHandle(PermitHandle delegate, Held entry) {
            super(delegate, entry);
        }

        @Override
        public int permits() {
            return ((PermitHandle) delegate).permits();
        }
    }
}
