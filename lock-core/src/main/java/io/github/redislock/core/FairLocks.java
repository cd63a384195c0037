package io.github.redislock.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * This client's fair-lock threads: those waiting, by waiter id, so a hand-over published to this client wakes
 * exactly the thread it was handed to (not every waiter of the key). Created before the subscription, which needs
 * it, and filled by {@link FairLock}.
 */
final class FairLocks {

    final ConcurrentHashMap<String, LocalLock> waiting = new ConcurrentHashMap<>();

    /**
     * Wakes the waiter a hand-over message names, giving it the grant the message carries.
     *
     * @return whether {@code message} was a fair-lock hand-over (else it is an exclusive lock's release notice)
     */
    boolean wake(String message) {
        if (!message.startsWith(FairLockScripts.HANDED_OVER)) {
            return false;
        }
        String[] parts = message.substring(FairLockScripts.HANDED_OVER.length()).split(FairLockScripts.HANDED_OVER, -1);
        LocalLock waiter = waiting.get(parts[0]);
        if (waiter != null) {
            if (parts.length > 1) {
                try {
                    waiter.grant = new Grant(Long.parseLong(parts[1]), parts.length > 2 ? Long.parseLong(parts[2]) : 0);
                } catch (NumberFormatException e) {
                    // not a grant this version understands: the waiter confirms it with a request
                }
            }
            waiter.wake();
        }
        return true;
    }

    /** The keys threads of this client wait for. */
    Stream<String> waitingKeys() {
        return waiting.values().stream().map(lock -> lock.key);
    }

    /** Hand-overs may have been missed (the subscription was down): every waiter looks again. */
    void wakeAll() {
        waiting.values().forEach(LocalLock::wake);
    }
}
