package io.github.redislock.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells of the losses the {@link Watchdog} marked: one log line each, and the {@link LockLostListener}s on a thread
 * of their own, one notification after another, so a slow listener delays other listeners, never a renewal.
 */
final class LockLosses implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);
    private static final long IDLE_SECONDS = 30;

    private final List<LockLostListener> listeners = new CopyOnWriteArrayList<>();
    private final ThreadPoolExecutor listenerThread = new ThreadPoolExecutor(1, 1, IDLE_SECONDS, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), Watchdog.daemon("redis-lock-listeners", false));

    LockLosses() {
        listenerThread.allowCoreThreadTimeOut(true);
    }

    void addListener(LockLostListener listener) {
        listeners.add(listener);
    }

    /** {@code holding} of {@code lock} was just marked lost for {@code reason}: logs it and tells the listeners. */
    void tell(LocalLock lock, Renewer renewer, LocalLock.Holding holding, String reason) {
        // the exclusive lock's holding may have passed in memory to a later holder with a later token
        long token = Math.max(holding.token(), lock.token);
        LockHandle view = new LostView(lock.key, token);
        String what = renewer.describe(lock.key);
        log.warn("{}{} (fencing token {}) was lost while held: {}", Character.toUpperCase(what.charAt(0)),
                what.substring(1), token, reason);
        try {
            listenerThread.execute(() -> tellListeners(view, reason));
        } catch (RejectedExecutionException e) {
            log.debug("{} was lost after the template closed; its listeners are not told", what);
        }
    }

    private void tellListeners(LockHandle view, String reason) {
        for (LockLostListener listener : listeners) {
            try {
                listener.lockLost(view, reason);
            } catch (RuntimeException | LinkageError e) {
                log.warn("LockLostListener {} failed", listener, e);
            }
        }
    }

    @Override
    public void close() {
        listenerThread.shutdown();
    }

    /** What a {@link LockLostListener} sees of a lost lock. */
    private record LostView(String key, long fencingToken) implements LockHandle {

        @Override
        public boolean isHeld() {
            return false;
        }

        @Override
        public void release() {
            throw new IllegalMonitorStateException("release the lost lock '" + key + "' through the handle that acquired it");
        }
    }
}
