package io.github.redislock.test;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for what a test must see before it goes on (a waiter queued, a key written), checking every millisecond. */
public final class Await {

    private Await() {
    }

    /**
     * Returns once {@code condition} holds; fails with an {@link AssertionError} that names {@code what} if it does not
     * within {@code timeout}.
     */
    public static void until(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
            }
            Thread.sleep(1);
        }
    }
}
