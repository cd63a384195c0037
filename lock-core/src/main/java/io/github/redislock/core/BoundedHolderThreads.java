package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The holder threads of asynchronous locks on Java 17-20: at most {@code maxHolders} daemon platform threads run
 * tasks at once (idle ones end after a minute). A task submitted while all are busy queues, first come first served,
 * and never blocks the submitting thread; a holder that finishes its task takes the next queued one. A queued
 * {@link AsyncLockExecutor.Rejectable} that no holder took within {@code holderWait} is rejected, naming the
 * properties; any other task waits in the queue until a holder takes it.
 */
final class BoundedHolderThreads implements Executor {

    private final int maxHolders;
    private final Duration holderWait;
    private final Executor delay;
    private final ThreadPoolExecutor threads;
    private final Deque<Queued> queue = new ArrayDeque<>(); // guarded by this
    private int busy; // guarded by this: holders running a task, at most maxHolders

    BoundedHolderThreads(int maxHolders, Duration holderWait) {
        this.maxHolders = maxHolders;
        this.holderWait = holderWait;
        // the rejection completes the caller's future, whose callbacks then run there: not on the JDK's one delay thread
        this.delay = CompletableFuture.delayedExecutor(holderWait.toNanos(), TimeUnit.NANOSECONDS);
        AtomicLong count = new AtomicLong();
        // never more than maxHolders threads at once: busy counts them, and a thread only starts when it was below
        this.threads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
                runnable -> {
                    Thread thread = new Thread(runnable, "redis-lock-async-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
    }

    @Override
    public void execute(Runnable task) {
        Queued queued;
        synchronized (this) {
            if (busy < maxHolders) {
                busy++;
                queued = null;
            } else {
                queued = new Queued(task);
                queue.addLast(queued);
            }
        }
        if (queued == null) {
            startHolder(task);
        } else if (task instanceof AsyncLockExecutor.Rejectable rejectable) {
            delay.execute(() -> {
                if (queued.claim()) { // still queued: no holder took it in time
                    synchronized (this) {
                        queue.remove(queued);
                    }
                    rejectable.reject(AsyncLockExecutor.noFreeHolder(maxHolders, holderWait));
                }
            });
        }
    }

    private void startHolder(Runnable first) {
        try {
            threads.execute(() -> runThenTakeQueued(first));
        } catch (RuntimeException | Error e) { // no thread could be started: the slot was not used
            synchronized (this) {
                busy--;
            }
            throw e;
        }
    }

    /** Runs {@code task}, then queued tasks while there are any; the holder's slot is freed when none is left. */
    private void runThenTakeQueued(Runnable task) {
        Runnable next = task;
        while (next != null) {
            try {
                next.run();
            } catch (RuntimeException | Error e) {
                Thread thread = Thread.currentThread();
                thread.getUncaughtExceptionHandler().uncaughtException(thread, e);
            }
            Thread.interrupted(); // a task's interrupt must not reach the next one
            next = takeQueued();
        }
    }

    /** The next queued task this holder claims, or {@code null} (and the slot freed) when there is none. */
    private Runnable takeQueued() {
        synchronized (this) {
            Queued queued;
            while ((queued = queue.pollFirst()) != null) {
                if (queued.claim()) {
                    return queued.task;
                }
            }
            busy--;
            return null;
        }
    }

    /** How many holders run tasks now, and how many tasks are queued: for tests. */
    synchronized int[] busyAndQueued() {
        return new int[] {busy, queue.size()};
    }

    /** A queued task: whoever claims it first (a holder, or the holder wait's end) decides its fate. */
    private static final class Queued {

        final Runnable task;
        private final AtomicBoolean claimed = new AtomicBoolean();

        Queued(Runnable task) {
            this.task = task;
        }

        boolean claim() {
            return claimed.compareAndSet(false, true);
        }
    }
}
