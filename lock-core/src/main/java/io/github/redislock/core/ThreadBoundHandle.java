package io.github.redislock.core;

/**
 * What every lock handle checks before it releases, written once so the lock types agree on it: only the thread
 * that acquired may release (a lock type's holds are per thread, so another thread's release would end the wrong
 * hold), and only once (a second release would end an outer, reentrant hold the caller still relies on).
 */
abstract class ThreadBoundHandle implements LockHandle {

    private final Thread thread = Thread.currentThread();
    private boolean released;

    /** How the release errors name what was acquired, for example {@code Lock 'orders'}. */
    abstract String subject();

    /** Releases the hold this handle stands for; called once, on the acquiring thread. */
    abstract void releaseHold();

    /** Whether {@link #release()} was called: touched only by the acquiring thread. */
    final boolean released() {
        return released;
    }

    @Override
    public final void release() {
        if (Thread.currentThread() != thread) {
            throw new IllegalMonitorStateException(subject() + " was acquired by thread '" + thread.getName()
                    + "'; only that thread may release it (current: '" + Thread.currentThread().getName() + "')");
        }
        if (released) {
            throw new IllegalMonitorStateException(subject() + " was already released by this handle");
        }
        released = true;
        releaseHold();
    }
}
