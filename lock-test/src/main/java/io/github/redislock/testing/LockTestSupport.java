package io.github.redislock.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.LockOptions;

/** Helpers for tests of locked code. */
public final class LockTestSupport {

    private LockTestSupport() {
    }

    /**
     * Takes the lock of {@code key} from {@code locks} on a thread of its own and holds it until the returned handle
     * is closed, so that code under test finds it taken by another owner, as if another instance held it: its
     * {@code @DistributedLock} method then waits its {@code waitTime} and fails as its {@code onFailure} says
     * ({@code THROW}: {@code LockNotAcquiredException}; {@code SKIP}: it does not run). Waits up to 10 s for the lock.
     *
     * <pre>{@code
     * try (var held = LockTestSupport.holdElsewhere(locks, "sample:report-job")) {
     *     reportJob.run(); // onFailure = SKIP: does nothing
     * }
     * }</pre>
     *
     * @param key the lock's key as the code names it, without the Redis key prefix
     */
    public static HeldElsewhere holdElsewhere(LockOperations locks, String key) {
        Objects.requireNonNull(locks, "locks");
        Objects.requireNonNull(key, "key");
        return new HeldElsewhere(locks, key);
    }

    /** A lock held by a thread of its own until {@link #close()}. */
    public static final class HeldElsewhere implements AutoCloseable {

        private final String key;
        private final CountDownLatch release = new CountDownLatch(1);
        private final CountDownLatch acquired = new CountDownLatch(1);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicReference<Long> fencingToken = new AtomicReference<>();
        private final Thread holder;

        HeldElsewhere(LockOperations locks, String key) {
            this.key = key;
            this.holder = new Thread(() -> {
                try (LockHandle handle = locks.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                    fencingToken.set(handle.fencingToken());
                    acquired.countDown();
                    release.await();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    acquired.countDown();
                }
            }, "lock-held-elsewhere [" + key + "]");
            holder.setDaemon(true);
            holder.start();
            try {
                if (!acquired.await(15, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("Could not hold lock '" + key + "' within 15s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                release.countDown();
                throw new IllegalStateException("Interrupted while taking lock '" + key + "'", e);
            }
            if (failure.get() != null) {
                throw new IllegalStateException("Could not hold lock '" + key + "'", failure.get());
            }
        }

        /** The key held. */
        public String key() {
            return key;
        }

        /** The fencing token of the holding. */
        public long fencingToken() {
            return fencingToken.get();
        }

        /** Releases the lock, and waits until it is released. */
        @Override
        public void close() {
            release.countDown();
            try {
                holder.join(TimeUnit.SECONDS.toMillis(15));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Throwable failed = failure.get();
            if (failed != null) {
                throw new IllegalStateException("Releasing lock '" + key + "' failed", failed);
            }
        }
    }
}
