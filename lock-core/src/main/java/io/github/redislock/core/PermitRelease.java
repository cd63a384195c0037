package io.github.redislock.core;

import io.github.redislock.core.SemaphoreScripts.HandOverReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;

/**
 * Gives a semaphore's permits back. When a thread of this client waits with an open {@link PermitOffer}, the release
 * hands the permits to the first such thread in its own script call, unless another client waited longer (so a busy
 * semaphore costs one script call per acquisition and release instead of two); a hand-over whose thread withdrew
 * meanwhile, or whose reply was lost, is undone by returning the permits. Otherwise the permits go back to the
 * semaphore and the clients waiting longest are woken, with a later look when not all were.
 */
final class PermitRelease {

    private static final Logger log = LoggerFactory.getLogger(PermitRelease.class);

    /** How long the waiter entry a hand-over leaves for this client's further waiting threads lives. */
    private static final long HANDED_OVER_ENTRY_MILLIS = 3 * PermitQueues.SLEEP_AFTER_FULL_HAND_OVER_MILLIS;

    private final SemaphoreScripts scripts;
    /** Where the threads waiting for permits sleep, by {@link SemaphorePermits#wakeName}: the name releases publish. */
    private final LocalLocks waiting;
    private final PermitQueues queues;
    private final BackgroundCleanup cleanup;
    /** Looks whether permits a release freed were taken by the clients it woke, when it did not wake them all. */
    private final WakeLooks looks;
    /** Test hook: runs in a releasing thread just after its hand-over script returned, before it settles the offer. */
    private final Runnable afterHandOverScript;

    PermitRelease(SemaphoreScripts scripts, LocalLocks waiting, PermitQueues queues, BackgroundCleanup cleanup,
            Runnable afterHandOverScript) {
        this.scripts = scripts;
        this.waiting = waiting;
        this.queues = queues;
        this.cleanup = cleanup;
        this.afterHandOverScript = afterHandOverScript;
        this.looks = new WakeLooks(cleanup, key -> {
            scripts.look(key, SemaphorePermits.wakeName(key));
            return 0;
        });
    }

    /**
     * Releases {@code holder}'s permits (or hands them over); when Redis cannot be reached, returns them in the
     * background (their lease ends them at the latest).
     *
     * @return whether Redis still had {@code holder}'s permits ({@code true} when it could not tell)
     */
    boolean release(String key, String holder) {
        boolean[] wasHolder = {true};
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                wasHolder[0] = releaseOrHandOver(key, holder);
            } catch (DataAccessException e) {
                log.warn("Could not release the permits of semaphore '{}' in Redis ({}); retrying in the background, "
                        + "and their lease ends them at the latest", key, e.toString());
                cleanup.run(key, () -> returnPermits(key, holder));
            }
        });
        return wasHolder[0];
    }

    /**
     * Returns {@code holder}'s permits, handing them to the thread at the head of this client's queue in the same
     * script call when it has posted an offer (and no other client waited longer).
     *
     * @return whether {@code holder} still had its permits
     */
    private boolean releaseOrHandOver(String key, String holder) {
        String name = SemaphorePermits.wakeName(key);
        PermitQueues.Claim claim = queues.claimFirstOpen(key);
        if (claim == null) {
            return returnPermits(key, holder);
        }
        PermitQueues.Queue queue = claim.queue();
        PermitOffer offer = claim.offer();
        boolean moreWaiting = claim.moreWaiting();
        LocalLock wakePoint = waiting.get(name);
        long freesBefore = wakePoint == null ? -1 : queue.frees(wakePoint);
        long requestStart = System.nanoTime();
        HandOverReply reply;
        try {
            reply = lookLater(key, scripts.releaseAndHandOver(key, holder, name, offer.holder, offer.permits,
                    offer.leaseMillis, queues.clientWaiter(), moreWaiting, HANDED_OVER_ENTRY_MILLIS));
            afterHandOverScript.run();
        } catch (RuntimeException e) {
            settleAndReturnIfWithdrawn(key, offer, 0, 0, true);
            throw e;
        }
        if (reply.unacknowledged()) {
            // taken back (or ended by its lease if that failed too): the next thread asks Redis itself
            settleAndReturnIfWithdrawn(key, offer, 0, 0, true);
            if (wakePoint != null) {
                wakePoint.wake(); // the permits are free again, and this client's waiter entry may be gone from Redis
            }
        } else if (reply.handedOver()) {
            if (reply.full() && moreWaiting && wakePoint != null) {
                queue.fullAtNanos = System.nanoTime();
                queue.fullAtFrees = freesBefore;
            }
            if (settleAndReturnIfWithdrawn(key, offer, reply.token(), requestStart, false)) {
                return reply.wasHolder(); // its thread stopped waiting: the permits go back to the semaphore
            }
            if (wakePoint != null && offer.isFirst()) {
                // the first thread sleeps on the wake point, not on its offer
                queue.handOverWakeups.incrementAndGet();
                wakePoint.wake();
            }
        } else {
            // declined (another client waited longer, or too few permits): the script woke the waiting clients,
            // this one too if it waits, in their order
            settleAndReturnIfWithdrawn(key, offer, 0, 0, false);
        }
        return reply.wasHolder();
    }

    /**
     * Returns {@code holder}'s permits in Redis (waking the threads waiting longest).
     *
     * @return whether {@code holder} still had them
     */
    boolean returnPermits(String key, String holder) {
        return lookLater(key, scripts.release(key, holder, SemaphorePermits.wakeName(key))).wasHolder();
    }

    /**
     * After a release that may not have woken every waiting client: looks a turn's time later whether permits are
     * still free, and if so wakes every client still waiting, so clients that died in front of the queue (their
     * entries not yet stale) do not strand a live one until its next look.
     */
    private HandOverReply lookLater(String key, HandOverReply reply) {
        if (reply.lookLater()) {
            looks.after(key);
        }
        return reply;
    }

    /**
     * Settles {@code offer}'s claim; when its thread stopped waiting meanwhile and permits were (or may have been)
     * handed to it, returns them.
     *
     * @return whether the thread had stopped waiting and the permits are being returned
     */
    private boolean settleAndReturnIfWithdrawn(String key, PermitOffer offer, long token, long requestStart,
            boolean failed) {
        if (!offer.settle(token, requestStart, failed)) {
            return false;
        }
        cleanup.run(key, () -> returnPermits(key, offer.holder));
        return true;
    }
}
