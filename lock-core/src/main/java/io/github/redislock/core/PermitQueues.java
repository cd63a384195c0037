package io.github.redislock.core;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * This client's threads waiting for each semaphore, in arrival order: a {@link Queue} of their
 * {@link PermitOffer}s per key, whose first thread asks Redis while the others wait for their turn or for permits a
 * release hands them. In Redis the threads of one queue are one waiter entry, {@link #clientWaiter()}.
 */
final class PermitQueues {

    /**
     * How long the next thread in line may sleep without asking Redis after a hand-over left no permit free (the
     * release registered this client as waiting, so other clients' releases still wake it); it asks then.
     */
    static final long SLEEP_AFTER_FULL_HAND_OVER_MILLIS = 1000;

    private final String clientId;
    /** This client's threads waiting for each semaphore, by key; a queue goes with its last thread. */
    private final ConcurrentHashMap<String, Queue> queues = new ConcurrentHashMap<>();

    PermitQueues(String clientId) {
        this.clientId = clientId;
    }

    /**
     * This client's threads waiting for one semaphore, first come first served: the first asks Redis, the others
     * wait for their turn or for permits handed to them. Its deque is guarded by {@link #queues}' compute.
     */
    static final class Queue {

        final ArrayDeque<PermitOffer> offers = new ArrayDeque<>();
        /** Wake-ups of the semaphore's wake point that were hand-overs to the first thread: they free no permit. */
        final AtomicLong handOverWakeups = new AtomicLong();
        /** {@link #frees} when a hand-over left no permit free (and registered this client as waiting), or -1. */
        volatile long fullAtFrees = -1;
        volatile long fullAtNanos;

        /** Counts the wake-ups that may have freed permits: releases published to this client, raised limits. */
        long frees(LocalLock wakePoint) {
            return wakePoint.wakeups() - handOverWakeups.get();
        }

        /**
         * Whether the last hand-over left no permit free and nothing that may free one woke this client since (within
         * {@link #SLEEP_AFTER_FULL_HAND_OVER_MILLIS}): the first thread may then sleep without asking Redis.
         */
        boolean knownFull(LocalLock wakePoint) {
            return fullAtFrees == frees(wakePoint)
                    && System.nanoTime() - fullAtNanos < TimeUnit.MILLISECONDS.toNanos(SLEEP_AFTER_FULL_HAND_OVER_MILLIS);
        }
    }

    /**
     * The first open offer of a semaphore's queue, claimed by a release, and whether more of this client's threads
     * wait behind it.
     */
    record Claim(Queue queue, PermitOffer offer, boolean moreWaiting) {
    }

    /** Puts {@code offer} at the end of the queue for {@code key}; first in it, it asks Redis. */
    Queue enqueue(String key, PermitOffer offer) {
        return queues.compute(key, (k, queue) -> {
            Queue q = queue != null ? queue : new Queue();
            q.offers.addLast(offer);
            if (q.offers.peekFirst() == offer) {
                offer.becomeFirst();
            }
            return q;
        });
    }

    /** Takes {@code offer} out of its queue; the next in line becomes first when it was. */
    void dequeue(String key, PermitOffer offer) {
        queues.computeIfPresent(key, (k, queue) -> {
            boolean wasFirst = queue.offers.peekFirst() == offer;
            queue.offers.remove(offer);
            if (queue.offers.isEmpty()) {
                return null;
            }
            if (wasFirst) {
                queue.offers.peekFirst().becomeFirst();
            }
            return queue;
        });
    }

    /** Whether more than one of this client's threads wait for the semaphore. */
    boolean othersWait(String key) {
        Queue queue = queues.get(key);
        return queue != null && queue.offers.size() > 1;
    }

    /**
     * Claims the first offer of {@code key}'s queue that no other release claimed, for a release to hand its
     * permits to.
     *
     * @return the claim; {@code null} when no thread of this client waits with an open offer
     */
    @Nullable Claim claimFirstOpen(String key) {
        PermitOffer[] target = {null};
        boolean[] moreWaiting = {false};
        Queue queue = queues.computeIfPresent(key, (k, q) -> {
            for (PermitOffer offer : q.offers) {
                if (target[0] == null && offer.claim()) {
                    target[0] = offer;
                } else if (offer.isOpen()) { // waits, or asks Redis itself (not claimable meanwhile)
                    moreWaiting[0] = true;
                    if (target[0] != null) {
                        break;
                    }
                }
            }
            return q;
        });
        PermitOffer offer = target[0];
        return offer == null ? null : new Claim(queue, offer, moreWaiting[0]);
    }

    /** This client's waiter id for every semaphore: its waiting threads are one entry in Redis, their queue is here. */
    String clientWaiter() {
        return clientId + ":queue";
    }
}
