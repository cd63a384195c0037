package io.github.redislock.core;

import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

/**
 * One lock held for asynchronous work: the work's future or publisher ends on some other thread, later, while locks
 * are per thread. So a <em>holder thread</em> (see {@link AsyncLockExecutor}) takes the lock the usual, blocking way,
 * starts the work, parks until whichever thread sees the work end calls {@link #end}, and then releases. The holder
 * thread is this acquisition's owner: nothing is held by the caller's thread, which never blocks, and the release
 * needs no thread of the work's. Any lock type and any number of keys can be held like this, with the same waiting,
 * renewal and release as a blocking call.
 * <p>
 * The hold runs {@link Locked}, on the holder thread: it acquires, calls {@link #hold} with the lock held (which
 * starts the work and returns once the work ended), and releases. {@link #cancel} ends the hold from any state: it
 * stops a wait for the lock (the holder thread is interrupted), keeps work from starting, or ends the hold of
 * running work.
 *
 * @param <S> what starting the work gives: a {@link CompletionStage}, a publisher
 */
public final class AsyncHold<S> {

    private enum State { ACQUIRING, RUNNING, CANCELLED, DONE }

    /** Acquires the lock, calls {@link AsyncHold#hold} while holding it, and releases it; runs on the holder thread. */
    @FunctionalInterface
    public interface Locked<S> {

        /**
         * @return what to report as started when {@link AsyncHold#hold} was not called (the lock was not acquired
         *         and the caller skips the work: an empty result); ignored when it was called
         */
        S run(AsyncHold<S> hold) throws Throwable;
    }

    /** Starts the asynchronous work; runs on the holder thread with the lock held. */
    @FunctionalInterface
    public interface Work<S> {

        S start() throws Throwable;
    }

    private final CompletableFuture<S> started = new CompletableFuture<>();
    /** Completed by whoever sees the work end: with {@code null}, or the failure it ended with. */
    private final CompletableFuture<Throwable> ended = new CompletableFuture<>();
    /** Completed once the holder thread is done: the lock released, or never taken. */
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    private State state = State.ACQUIRING; // guarded by this
    private Thread holder; // guarded by this, while ACQUIRING

    private AsyncHold() {
    }

    /**
     * Starts a hold: {@code locked} runs on a thread of {@code holders}. A rejected task fails the hold: rejected at
     * once (an exception from {@code execute}) or later (see {@link AsyncLockExecutor.Rejectable}).
     */
    public static <S> AsyncHold<S> start(Executor holders, Locked<S> locked) {
        AsyncHold<S> hold = new AsyncHold<>();
        try {
            holders.execute(new AsyncLockExecutor.Rejectable() {
                @Override
                public void run() {
                    hold.runOnHolder(locked);
                }

                @Override
                public void reject(RuntimeException reason) {
                    hold.finish(reason);
                }
            });
        } catch (RuntimeException rejected) {
            hold.finish(rejected);
        }
        return hold;
    }

    /**
     * Starts holding {@code key}'s exclusive lock with {@code options} for the stage {@code action} gives, as
     * {@link RedisLockTemplate#executeAsync} does.
     */
    static <T> CompletableFuture<T> executeAsync(Executor holders, Callable<LockHandle> acquire,
            java.util.function.Supplier<? extends CompletionStage<T>> action) {
        AsyncHold<CompletionStage<T>> hold = start(holders, h -> {
            LockHandle handle = acquire.call();
            try {
                h.hold(action::get);
            } catch (Throwable failure) {
                try {
                    handle.release();
                } catch (RuntimeException releaseFailure) {
                    failure.addSuppressed(releaseFailure);
                }
                throw failure;
            }
            handle.release();
            return null;
        });
        return hold.completion();
    }

    private void runOnHolder(Locked<S> locked) {
        synchronized (this) {
            if (state == State.CANCELLED) {
                finish(new CancellationException("cancelled before the lock was acquired"));
                return;
            }
            holder = Thread.currentThread();
        }
        Throwable failure = null;
        S skipped = null;
        try {
            skipped = locked.run(this);
        } catch (Throwable t) {
            failure = t;
        } finally {
            synchronized (this) {
                state = State.DONE;
                holder = null;
                Thread.interrupted(); // a cancellation's interrupt that came too late must not reach the next task
            }
        }
        if (failure == null) {
            started.complete(skipped); // no-op when the work started
        }
        finish(failure);
    }

    private void finish(Throwable failure) {
        if (failure == null) {
            finished.complete(null);
        } else {
            started.completeExceptionally(failure); // no-op when the work started
            finished.completeExceptionally(failure);
        }
    }

    /**
     * Called by {@link Locked} on the holder thread with the lock held: starts the work and waits until it ended.
     *
     * @throws Throwable the failure the work ended with (a {@link CancellationException} when cancelled), for the
     *         caller to release the lock and rethrow
     */
    public void hold(Work<S> work) throws Throwable {
        synchronized (this) {
            if (state != State.ACQUIRING) {
                throw new CancellationException("cancelled while the lock was acquired");
            }
            state = State.RUNNING;
            holder = null;
        }
        Thread.interrupted(); // a cancellation interrupts only while ACQUIRING, and ended tells it since
        started.complete(work.start());
        Throwable failure = awaitEnd();
        if (failure != null) {
            throw failure;
        }
    }

    private Throwable awaitEnd() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return ended.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the work decides when the hold ends; the interrupt is kept for later
                } catch (ExecutionException e) {
                    throw new IllegalStateException(e); // never completed exceptionally
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Tells what starting gave (once the lock was acquired and the work started), or why nothing started. */
    public void whenStarted(BiConsumer<? super S, ? super Throwable> action) {
        started.whenComplete(action);
    }

    /**
     * The work ended, normally ({@code failure} null) or not: the holder thread releases the lock. Any thread may call
     * it; later calls change nothing.
     *
     * @return completes once the holder thread is done: normally, or with the failure it ended with (the work's own,
     *         with a release failure suppressed in it, or the release's alone)
     */
    public CompletableFuture<Void> end(Throwable failure) {
        ended.complete(failure);
        return finished;
    }

    /**
     * Ends the hold whatever it does: a wait for the lock stops, work that has not started will not, and running work
     * no longer holds the lock (the caller stops that work itself).
     *
     * @return completes once the holder thread is done
     */
    public CompletableFuture<Void> cancel() {
        synchronized (this) {
            if (state == State.ACQUIRING) {
                state = State.CANCELLED;
                if (holder != null) {
                    holder.interrupt();
                }
            }
        }
        return end(new CancellationException("cancelled"));
    }

    /**
     * A future of a hold whose work is a {@link CompletionStage}: completes with the stage's outcome once the lock
     * was released, or fails with what kept it from being acquired. Cancelling it cancels the hold and the stage.
     */
    public <T> CompletableFuture<T> completion() {
        CompletableFuture<T> result = new CompletableFuture<>();
        whenStarted((stage, startFailure) -> {
            if (startFailure != null) {
                result.completeExceptionally(unwrap(startFailure));
                return;
            }
            if (stage == null) { // a skipped call's empty result, or a method that returned null
                finished.whenComplete((ignored, releaseFailure) -> {
                    if (releaseFailure != null) {
                        result.completeExceptionally(unwrap(releaseFailure));
                    } else {
                        result.complete(null);
                    }
                });
                end(null);
                return;
            }
            @SuppressWarnings("unchecked")
            CompletionStage<T> typed = (CompletionStage<T>) stage;
            if (result.isCancelled()) {
                cancelStage(typed);
            }
            typed.whenComplete((value, failure) -> end(unwrap(failure)).whenComplete((ignored, releaseFailure) -> {
                if (releaseFailure != null) {
                    result.completeExceptionally(unwrap(releaseFailure));
                } else if (failure != null) {
                    result.completeExceptionally(unwrap(failure));
                } else {
                    result.complete(value);
                }
            }));
        });
        result.whenComplete((value, failure) -> {
            if (result.isCancelled()) {
                cancel();
                whenStarted((stage, ignored) -> cancelStage(stage));
            }
        });
        return result;
    }

    private static void cancelStage(Object stage) {
        if (stage instanceof CompletionStage<?> completionStage) {
            try {
                completionStage.toCompletableFuture().cancel(true);
            } catch (UnsupportedOperationException e) {
                // a stage that cannot be cancelled: the hold ends when it completes
            }
        }
    }

    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
