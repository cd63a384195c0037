package io.github.redislock.shedlock;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A thread of a pool that runs the calls on one lock, one after another, from its acquisition to its release: the
 * engine's locks belong to the thread that acquired them, and ShedLock may unlock or extend from other threads.
 * <p>
 * When the lock's lease ends before it is unlocked (a job running past {@code lockAtMostFor}, or a lock nobody
 * unlocks), the thread runs the expiry action (which lets go of the lock in this JVM, so that the next tick here can
 * take it as one elsewhere could) and ends; later calls then run on the caller's thread.
 */
final class HolderThread {

    private final ReentrantLock mutex = new ReentrantLock();
    private final Condition called = mutex.newCondition();
    private final Queue<FutureTask<?>> calls = new ArrayDeque<>();
    /** When ({@link System#nanoTime()}) to run {@link #onExpiry}; 0 for never. Guarded by {@link #mutex}. */
    private long expiresAtNanos;
    private Runnable onExpiry;
    /** Whether the thread has ended: after {@link #stop()} or the expiry. Guarded by {@link #mutex}. */
    private boolean ended;
    private boolean stopping;

    HolderThread(Executor pool, String key) {
        pool.execute(() -> {
            String name = Thread.currentThread().getName();
            Thread.currentThread().setName(name + " [" + key + "]");
            try {
                runCalls();
            } finally {
                Thread.currentThread().setName(name);
            }
        });
    }

    /** From a call on the holder thread: runs {@code action} there at {@code nanos} unless a call comes first. */
    void expireAt(long nanos, Runnable action) {
        mutex.lock();
        try {
            expiresAtNanos = nanos;
            onExpiry = action;
        } finally {
            mutex.unlock();
        }
    }

    private void runCalls() {
        while (true) {
            FutureTask<?> call;
            Runnable expiry = null;
            mutex.lock();
            try {
                while (calls.isEmpty() && !stopping) {
                    if (expiresAtNanos == 0) {
                        called.awaitUninterruptibly();
                        continue;
                    }
                    long left = expiresAtNanos - System.nanoTime();
                    if (left <= 0) {
                        expiry = onExpiry;
                        break;
                    }
                    try {
                        called.awaitNanos(left);
                    } catch (InterruptedException e) {
                        // the pool is shut down by force: wait on for the unlock or the expiry
                    }
                }
                call = calls.poll();
                if (call == null) {
                    ended = true;
                }
            } finally {
                mutex.unlock();
            }
            if (call == null) {
                if (expiry != null) {
                    expiry.run();
                }
                return;
            }
            call.run();
        }
    }

    /**
     * Runs {@code call} on the holder thread (on the caller's, once it has ended) and returns its result; its
     * unchecked exception is rethrown.
     */
    <T> T call(Callable<T> call) {
        FutureTask<T> task = new FutureTask<>(call);
        mutex.lock();
        try {
            if (ended) {
                task.run();
            } else {
                calls.add(task);
                called.signal();
            }
        } finally {
            mutex.unlock();
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the lock must not be left half-held: wait for the call to finish
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Runs {@code call} as {@link #call} does, then frees the thread. */
    <T> T callLast(Callable<T> call) {
        try {
            return call(call);
        } finally {
            stop();
        }
    }

    /** Frees the thread for the pool once the calls queued so far have run. */
    void stop() {
        mutex.lock();
        try {
            stopping = true;
            called.signal();
        } finally {
            mutex.unlock();
        }
    }
}
