package io.github.redislock.core;

import java.util.Collection;
import java.util.Collections;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * This client's {@link LocalLock}s by key. An entry lives while threads hold or wait for its key: each thread
 * retains it before it queues and unretains it when it leaves, so the map only ever holds keys in use and a
 * key's threads always meet on one entry.
 */
final class LocalLocks {

    private final ConcurrentHashMap<String, LocalLock> locks = new ConcurrentHashMap<>();

    /** The key's entry, created if needed, counted as used by the calling thread until {@link #unretain}. */
    LocalLock retain(String key) {
        return locks.compute(key, (k, lock) -> {
            LocalLock l = lock != null ? lock : new LocalLock(k);
            l.users++;
            return l;
        });
    }

    /**
     * Counts the calling thread out of {@code lock}'s users; the entry goes with its last one.
     *
     * @return whether the entry went while the Redis lock was handed over to it: every thread queued for it gave
     *         up, so nobody will take that lock, and the caller must give it back
     */
    boolean unretain(LocalLock lock) {
        boolean[] dropped = {false};
        locks.computeIfPresent(lock.key, (k, current) -> {
            if (current != lock || --current.users > 0) {
                return current;
            }
            dropped[0] = true;
            return null;
        });
        if (dropped[0] && lock.handedOver) {
            lock.handedOver = false;
            return true;
        }
        return false;
    }

    /** The key's entry, or {@code null} when no thread of this client holds or waits for it. */
    LocalLock get(String key) {
        return locks.get(key);
    }

    /** A live view of every entry, for the watchdog. */
    Collection<LocalLock> all() {
        return Collections.unmodifiableCollection(locks.values());
    }

    int size() {
        return locks.size();
    }

    /** The keys in use now. */
    Stream<String> keys() {
        return locks.keySet().stream();
    }

    /** A release of {@code key} was published: wakes this client's contender for it. */
    void wake(String key) {
        LocalLock lock = locks.get(key);
        if (lock != null) {
            lock.wake();
        }
    }

    /** Releases may have been missed (the subscription was down): every contender looks again. */
    void wakeAll() {
        locks.values().forEach(LocalLock::wake);
    }
}
