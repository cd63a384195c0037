package io.github.redislock.core;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * What every lock engine ({@link LockEngine}) of one template shares: the client id and the owner ids drawn from it,
 * the watchdog lease, the {@link Watchdog}, the background clean-up, the {@link LockActivity} that observers and
 * diagnostics read, and the {@link WaitLoop} waiting threads sleep in. A template builds one and hands it to each
 * of its engines whole, so no engine keeps its own copy of any of it.
 */
final class EngineContext {

    /** This client's random id (128 bits, hex): the owner of a lock in Redis is this id plus the thread. */
    final String clientId;
    final Duration watchdogLease;
    final WaitLoop waitLoop;
    final Watchdog watchdog;
    final BackgroundCleanup cleanup;
    /** Confirms, in the background, the grants holders took from their message (fair and exclusive alike). */
    final GrantConfirmations confirmations;
    final LockActivity activity = new LockActivity(this::checkOpen);
    /** The template's class name, for messages. */
    private final String template;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Numbers this client's acquisition attempts, so every attempt has an owner id of its own in Redis. */
    private final AtomicLong attempts = new AtomicLong();

    /**
     * @param clientId from {@link #newClientId()}, made before the context because the wake-up channel behind
     *        {@code waitLoop} is named after it
     * @param callsPerNode how many renewal calls to one Redis node may run at once (see {@link Watchdog})
     * @param nodeOf the Redis node that serves a lock's key, as far as known without asking ({@code null}: one Redis,
     *        or not known yet): background calls queue node by node
     */
    EngineContext(String template, String clientId, Duration watchdogLease, WaitLoop waitLoop, int callsPerNode,
            Function<String, String> nodeOf) {
        this.template = template;
        this.clientId = clientId;
        this.watchdogLease = watchdogLease;
        this.waitLoop = waitLoop;
        this.watchdog = new Watchdog(watchdogLease, callsPerNode);
        this.cleanup = new BackgroundCleanup(watchdog, nodeOf, watchdogLease, closed::get);
        this.confirmations = new GrantConfirmations(cleanup, watchdog);
        watchdog.setEvents(activity);
    }

    static String newClientId() {
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        return HexFormat.of().formatHex(id);
    }

    /**
     * A new owner id for the calling thread's next attempt: client, thread, and which attempt of this client, so a
     * late clean-up of an earlier attempt can never release a later one.
     */
    String newOwner() {
        return clientId + ":" + Thread.currentThread().getId() + ":" + attempts.incrementAndGet();
    }

    /** A new owner id for a holding that is no thread's yet ({@code role}: "handover", "share"). */
    String newOwner(String role) {
        return clientId + ":" + role + ":" + attempts.incrementAndGet();
    }

    /**
     * Called before every acquisition: a closed template takes no new lock, since its watchdog no longer renews and
     * a lock taken then would stay in Redis until its lease ends. Locks held across the close can still be released.
     *
     * @throws IllegalStateException naming the template and {@code key} once it was closed
     */
    void checkOpen(String key) {
        if (closed.get()) {
            throw new IllegalStateException("This " + template + " is closed: lock '" + key + "' not acquired (a closed "
                    + "template takes no new locks; those it holds can still be released)");
        }
    }

    /** Stops the watchdog (held locks are left to expire with their lease); whether this call closed it. */
    boolean closeOnce() {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        watchdog.close();
        return true;
    }
}
