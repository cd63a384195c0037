package io.github.redislock.core;

import java.util.AbstractCollection;
import java.util.Collection;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * This client's fair-lock threads: those waiting, by waiter id, so a hand-over published to this client wakes
 * exactly the thread it was handed to (not every waiter of the key); and the holdings, for the {@link Watchdog}.
 * Created before the subscription and the watchdog, which both need it, and filled by {@link FairLock}.
 */
final class FairLocks {

    final ConcurrentHashMap<String, LocalLock> waiting = new ConcurrentHashMap<>();
    final Set<LocalLock> held = ConcurrentHashMap.newKeySet();

    /**
     * Wakes the waiter a hand-over message names.
     *
     * @return whether {@code message} was a fair-lock hand-over (else it is an exclusive lock's release notice)
     */
    boolean wake(String message) {
        if (!message.startsWith(FairLockScripts.HANDED_OVER)) {
            return false;
        }
        LocalLock waiter = waiting.get(message.substring(FairLockScripts.HANDED_OVER.length()));
        if (waiter != null) {
            waiter.wake();
        }
        return true;
    }

    /** Hand-overs may have been missed (the subscription was down): every waiter looks again. */
    void wakeAll() {
        waiting.values().forEach(LocalLock::wake);
    }

    /** A live view of {@code others} and the fair holdings, for the one watchdog that renews them all. */
    Collection<LocalLock> withHeld(Collection<LocalLock> others) {
        return new AbstractCollection<>() {
            @Override
            public Iterator<LocalLock> iterator() {
                return Stream.concat(others.stream(), held.stream()).iterator();
            }

            @Override
            public int size() {
                return others.size() + held.size();
            }
        };
    }
}
