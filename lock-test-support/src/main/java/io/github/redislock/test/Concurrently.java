package io.github.redislock.test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs the same calls on several threads at once, for tests that prove exclusion or a limit under contention. */
public final class Concurrently {

    private Concurrently() {
    }

    /** One call of a thread, given the thread's number (0 to threads - 1). */
    @FunctionalInterface
    public interface Call {

        void run(int thread) throws Exception;
    }

    /**
     * Starts {@code threads} threads together, each making {@code times} calls of {@code call}, and waits up to two
     * minutes for each; the threads are stopped before it returns.
     *
     * @throws AssertionError with the first failure of a thread, or when a thread did not finish in time
     */
    public static void run(int threads, int times, Call call) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < times; i++) {
                        call.run(thread);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : futures) {
                future.get(2, TimeUnit.MINUTES);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError(e);
        } finally {
            pool.shutdownNow();
        }
    }
}
