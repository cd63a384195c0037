package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * All-or-nothing locking of several keys. The keys are taken in sorted order, so two callers naming the same keys
 * in opposite orders never wait for each other in a cycle; they share one deadline, so the whole takes at most the
 * wait time; when one key cannot be had, those already taken are released and nothing is held.
 */
final class MultiLock implements MultiLockHandle {

    private final List<LockHandle> handles;
    private final Thread thread = Thread.currentThread();
    private boolean released;

    private MultiLock(List<LockHandle> handles) {
        this.handles = List.copyOf(handles);
    }

    /**
     * The keys, validated, sorted and without duplicates.
     *
     * @throws IllegalArgumentException when there is none, or one is invalid
     */
    static SortedSet<String> sortedKeys(Collection<String> keys) {
        Objects.requireNonNull(keys, "keys");
        SortedSet<String> sorted = new TreeSet<>();
        for (String key : keys) {
            sorted.add(RedisLockKeys.validate(key));
        }
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("at least one lock key is needed");
        }
        return sorted;
    }

    /**
     * Takes every key or none.
     *
     * @param wait the wait shared by all keys
     * @param orThrow whether a key another owner kept past the wait throws rather than returns {@code null}
     * @return the handle; {@code null} when another owner kept a key past the wait (and not {@code orThrow})
     * @throws LockNotAcquiredException naming the key another owner kept (with {@code orThrow}), or one Redis
     *         could not be reached for
     */
    static MultiLockHandle acquire(Acquisition acquisition, SortedSet<String> keys, Duration wait, Duration lease,
            boolean orThrow) {
        List<LockHandle> handles = new ArrayList<>(keys.size());
        long start = System.nanoTime();
        try {
            for (String key : keys) {
                Duration left = wait.minusNanos(System.nanoTime() - start);
                Optional<LockHandle> handle = acquisition.tryAcquire(key, left.isNegative() ? Duration.ZERO : left, lease);
                if (handle.isEmpty()) {
                    if (orThrow) {
                        throw new LockNotAcquiredException(key, wait);
                    }
                    releaseQuietly(handles);
                    return null;
                }
                handles.add(handle.get());
            }
            return new MultiLock(handles);
        } catch (RuntimeException e) {
            releaseQuietly(handles);
            throw e;
        }
    }

    /** How one key is taken: the exclusive lock's, or one side of the read/write lock's. */
    @FunctionalInterface
    interface Acquisition {

        Optional<LockHandle> tryAcquire(String key, Duration wait, Duration lease);
    }

    private static void releaseQuietly(List<LockHandle> handles) {
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                handles.get(i).release();
            } catch (RuntimeException ignored) {
                // held only for an instant while acquiring the others; its loss is of no consequence
            }
        }
    }

    @Override
    public List<String> keys() {
        return handles.stream().map(LockHandle::key).toList();
    }

    @Override
    public Map<String, Long> fencingTokens() {
        Map<String, Long> tokens = new LinkedHashMap<>();
        handles.forEach(handle -> tokens.put(handle.key(), handle.fencingToken()));
        return Collections.unmodifiableMap(tokens);
    }

    @Override
    public long fencingToken(String key) {
        for (LockHandle handle : handles) {
            if (handle.key().equals(key)) {
                return handle.fencingToken();
            }
        }
        throw new IllegalArgumentException("'" + key + "' is not one of the keys held: " + keys());
    }

    @Override
    public boolean isHeld() {
        return handles.stream().allMatch(LockHandle::isHeld);
    }

    @Override
    public void release() {
        if (Thread.currentThread() != thread) {
            throw new IllegalMonitorStateException("Locks " + keys() + " were acquired by thread '" + thread.getName()
                    + "'; only that thread may release them (current: '" + Thread.currentThread().getName() + "')");
        }
        if (released) {
            throw new IllegalMonitorStateException("Locks " + keys() + " were already released by this handle");
        }
        released = true;
        RuntimeException first = null;
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                handles.get(i).release();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "MultiLockHandle" + fencingTokens() + (isHeld() ? " held" : " not held");
    }
}
