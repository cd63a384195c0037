package io.github.redislock.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the {@link Watchdog} does with a renewal once its turn came: sends it (one holding, or a batch with the
 * renewer's batched call) on the calling thread, and records each holding renewed, gone (lost) or not reached (to be
 * retried while its lease lasts). Deciding when to renew, and resending an unanswered renewal, is the watchdog's.
 */
final class RenewalAnswers {

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private final Watchdog watchdog;

    RenewalAnswers(Watchdog watchdog) {
        this.watchdog = watchdog;
    }

    /**
     * Sends one RENEW for {@code holding} on the calling thread. Only that holding is extended
     * locally, and the script never shortens a TTL: a renewal that lands after the lock was handed
     * to a holder with a longer lease changes nothing.
     */
    void renew(LocalLock lock, Renewer renewer, LocalLock.Holding holding, long sent) {
        try {
            long started = System.nanoTime(); // after any wait in its node's queue: the lease runs from here
            if (renewer.call().renew(lock.key, holding.owner(), TimeUnit.NANOSECONDS.toMillis(holding.leaseNanos()))) {
                renewed(new Watchdog.Due(lock, renewer, holding), started);
            } else {
                gone(new Watchdog.Due(lock, renewer, holding));
            }
        } catch (RuntimeException e) {
            if (notRenewed(new Watchdog.Due(lock, renewer, holding), sent, e)) {
                log.warn("Could not renew {} (will retry before its lease ends): {}", renewer.describe(lock.key),
                        e.toString());
            }
        } finally {
            lock.renewalEnded(holding, sent);
        }
    }

    /** Sends one batched renewal for every holding of {@code batch} on the calling thread, as {@link #renew} does one. */
    void renewMany(Watchdog.Batch batch) {
        List<Watchdog.Due> holdings = batch.holdings;
        try {
            List<String> keys = new ArrayList<>(holdings.size());
            List<String> owners = new ArrayList<>(holdings.size());
            long[] leases = new long[holdings.size()];
            for (int i = 0; i < holdings.size(); i++) {
                Watchdog.Due due = holdings.get(i);
                keys.add(due.lock().key);
                owners.add(due.holding().owner());
                leases[i] = TimeUnit.NANOSECONDS.toMillis(due.holding().leaseNanos());
            }
            Renewer.Replies replies;
            long started = System.nanoTime(); // after any wait in its node's queue: the leases run from here
            try {
                replies = holdings.get(0).renewer().many().renew(keys, owners, leases);
            } catch (RuntimeException e) {
                replies = new Renewer.Replies(String.valueOf(Renewer.Replies.NOT_ASKED).repeat(holdings.size()), e);
            }
            int failed = 0;
            for (int i = 0; i < holdings.size(); i++) {
                Watchdog.Due due = holdings.get(i);
                char outcome = replies.outcomes().charAt(i);
                if (outcome == Renewer.Replies.RENEWED) {
                    renewed(due, started);
                } else if (outcome == Renewer.Replies.GONE) {
                    gone(due);
                } else if (notRenewed(due, batch.sent, replies.failure())) {
                    failed++;
                }
            }
            if (failed > 0) {
                log.warn("Could not renew {} of {} locks in one batch (will retry before their leases end): {}", failed,
                        holdings.size(), String.valueOf(replies.failure()));
            }
        } finally {
            holdings.forEach(due -> due.lock().renewalEnded(due.holding(), batch.sent));
        }
    }

    /**
     * Records a renewal sent at {@code started} that Redis confirmed. If the holding's lease (less the margin) ran out
     * before the answer came, its holder may have been told it no longer holds the lock: it stays lost, and is
     * marked so, rather than held again.
     */
    private void renewed(Watchdog.Due due, long started) {
        if (due.lock().renewed(due.holding(), started)) {
            watchdog.events().renewal(due.lock(), LockObserver.RenewalOutcome.RENEWED);
        } else if (due.lock().invalidReason() != null && watchdog.markLost(due.lock(), due.renewer(), due.holding(),
                "its renewal was answered only after its lease ran out")) {
            watchdog.events().renewal(due.lock(), LockObserver.RenewalOutcome.LOST);
        }
    }

    private void gone(Watchdog.Due due) {
        if (watchdog.markLost(due.lock(), due.renewer(), due.holding(), "the watchdog found " + due.renewer().whatIsGone()
                + " gone from Redis (expired, deleted, or Redis lost it)")) {
            watchdog.events().renewal(due.lock(), LockObserver.RenewalOutcome.LOST);
        }
    }

    /**
     * A renewal sent at {@code sent} could not reach Redis: marks the holding lost if its lease ran out meanwhile.
     *
     * @return whether it counted as a failed renewal to retry, for the caller to log
     */
    private boolean notRenewed(Watchdog.Due due, long sent, RuntimeException failure) {
        LocalLock lock = due.lock();
        boolean stillSent = lock.renewalInFlight(due.holding(), sent); // before a loss forgets it
        if (lock.invalidReason() != null) {
            if (watchdog.markLost(lock, due.renewer(), due.holding(), "Redis could not be reached to renew it before its lease "
                    + "ran out: " + (failure == null ? "no answer" : failure.getMessage()))) {
                watchdog.events().renewal(lock, LockObserver.RenewalOutcome.LOST);
            }
        } else if (stillSent) { // not given up on by timedOut, which logs and counts itself
            watchdog.events().renewal(lock, LockObserver.RenewalOutcome.FAILED);
            return true;
        }
        return false;
    }
}
