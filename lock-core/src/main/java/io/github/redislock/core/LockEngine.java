package io.github.redislock.core;

import java.util.stream.Stream;

/**
 * One lock type's engine (exclusive, fair, read/write, semaphore) on a template's {@link EngineContext}: what the
 * template needs of each, so it loops over its engines to pass on wake-ups and to list what is in use.
 */
interface LockEngine {

    /**
     * A release notice published to this client reached it: wakes this engine's threads waiting for it.
     *
     * @param message the key, or what the engine's release script publishes instead
     * @return whether the notice was meant for this engine alone (a fair hand-over names one waiting thread), so no
     *         other engine need look at it
     */
    boolean wake(String message);

    /** Notices may have been missed (the subscription was down): every waiting thread looks again. */
    void wakeAll();

    /** The locks this engine's threads hold or wait for now, each named by {@link RedisLockDiagnostics#inUse}. */
    Stream<String> inUse();
}
