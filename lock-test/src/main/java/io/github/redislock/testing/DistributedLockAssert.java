package io.github.redislock.testing;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

import io.github.redislock.annotation.LockContext;
import io.github.redislock.core.LockObserver;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedisLockDiagnostics.HeldLock;

/**
 * Assertions that code runs under a distributed lock, as ShedLock's {@code LockAssert} is for scheduled jobs. Each
 * throws an {@link AssertionError} (which every test framework reports as a failure) saying what was expected and what
 * the thread held.
 * <ul>
 * <li>From a test: {@link #assertRunsUnderLock(LockOperations, String, ThrowingRunnable)} calls the code and checks that
 * it took the lock of the key on the calling thread, through {@code @DistributedLock} or the template's API.</li>
 * <li>From inside the code (a test double it calls, a callback): {@link #assertLocked()}, {@link #assertLocked(String)}
 * check the current {@code @DistributedLock} method's lock; {@link #assertLocked(LockOperations, String)} any lock
 * this thread holds through the template.</li>
 * </ul>
 */
public final class DistributedLockAssert {

    /** Per template, the one observer that records acquisitions for {@link #assertRunsUnderLock}. */
    private static final Map<LockOperations, AcquisitionRecorder> RECORDERS = new WeakHashMap<>();

    private DistributedLockAssert() {
    }

    /** Code a test calls; may throw anything. */
    @FunctionalInterface
    public interface ThrowingRunnable {
        void run() throws Throwable;
    }

    /**
     * Calls {@code code} on this thread and asserts that it took the lock of {@code key} from {@code locks} while it
     * ran (through {@code @DistributedLock} or the template's verbs with options; the {@code java.util.concurrent.locks.Lock}
     * methods of a lock object are not seen). What {@code code} throws is rethrown after the check.
     *
     * @param key the lock's key as the code names it ({@code @DistributedLock}'s {@code name} and {@code key} joined
     *        with {@code ':'}), without the Redis key prefix
     */
    public static void assertRunsUnderLock(LockOperations locks, String key, ThrowingRunnable code) throws Throwable {
        Objects.requireNonNull(key, "key");
        AcquisitionRecorder recorder = recorderOf(locks);
        Set<String> taken = recorder.startRecording();
        Throwable thrown = null;
        try {
            code.run();
        } catch (Throwable e) {
            thrown = e;
        } finally {
            recorder.stopRecording();
        }
        if (!taken.contains(key)) {
            AssertionError error = new AssertionError("Expected the code to run under the distributed lock '" + key
                    + "', but it took " + (taken.isEmpty() ? "no lock" : "only the locks " + taken)
                    + " on thread '" + Thread.currentThread().getName() + "'");
            if (thrown != null) {
                error.addSuppressed(thrown);
            }
            throw error;
        }
        if (thrown != null) {
            throw thrown;
        }
    }

    /** Asserts that the current thread runs inside a {@code @DistributedLock} method. */
    public static void assertLocked() {
        if (!LockContext.isActive()) {
            throw new AssertionError("Expected to run under a @DistributedLock method's lock, but thread '"
                    + Thread.currentThread().getName() + "' runs in no @DistributedLock method");
        }
    }

    /**
     * Asserts that the innermost {@code @DistributedLock} method running on this thread holds {@code key} (its
     * {@code name} and {@code key} joined with {@code ':'}).
     */
    public static void assertLocked(String key) {
        assertLocked();
        Set<String> keys = LockContext.keys();
        if (!keys.contains(key)) {
            throw new AssertionError("Expected to run under the distributed lock '" + key
                    + "', but the current @DistributedLock method holds " + keys);
        }
    }

    /** Asserts that this thread holds the lock of {@code key} from {@code locks} now (by any lock type). */
    public static void assertLocked(LockOperations locks, String key) {
        String thread = Thread.currentThread().getName();
        boolean held = false;
        StringBuilder heldHere = new StringBuilder();
        for (HeldLock lock : locks.diagnostics().heldLocks()) {
            if (lock.heldUntil() == null && thread.equals(lock.thread())) {
                held |= lock.key().equals(key);
                heldHere.append(heldHere.length() == 0 ? "" : ", ").append(lock.key());
            }
        }
        if (!held) {
            throw new AssertionError("Expected thread '" + thread + "' to hold the distributed lock '" + key
                    + "', but it holds " + (heldHere.length() == 0 ? "none" : "[" + heldHere + "]"));
        }
    }

    private static AcquisitionRecorder recorderOf(LockOperations locks) {
        Objects.requireNonNull(locks, "locks");
        synchronized (RECORDERS) {
            return RECORDERS.computeIfAbsent(locks, operations -> {
                AcquisitionRecorder recorder = new AcquisitionRecorder();
                operations.addObserver(recorder);
                return recorder;
            });
        }
    }

    /** Records, for the threads recording now, the keys they acquire (observers run on the acquiring thread). */
    private static final class AcquisitionRecorder implements LockObserver {

        private final ThreadLocal<Set<String>> recording = new ThreadLocal<>();

        Set<String> startRecording() {
            Set<String> keys = ConcurrentHashMap.newKeySet();
            recording.set(keys);
            return keys;
        }

        void stopRecording() {
            recording.remove();
        }

        @Override
        public Acquisition acquiring(LockEvent lock) {
            Set<String> keys = recording.get();
            if (keys == null) {
                return Acquisition.NONE;
            }
            return new Acquisition() {
                @Override
                public void acquired(java.time.Duration waited) {
                    keys.add(lock.key());
                }
            };
        }
    }
}
