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
     * Wakes the waiter a hand-over message names, giving it the fencing token the message carries.
     *
     * @return whether {@code message} was a fair-lock hand-over (else it is an exclusive lock's release notice)
     */
    boolean wake(String message) {
        if (!message.startsWith(FairLockScripts.HANDED_OVER)) {
            return false;
        }
        int start = FairLockScripts.HANDED_OVER.length();
        int tokenStart = message.indexOf(FairLockScripts.HANDED_OVER, start);
        String owner = tokenStart < 0 ? message.substring(start) : message.substring(start, tokenStart);
        LocalLock waiter = waiting.get(owner);
        if (waiter != null) {
            if (tokenStart >= 0) {
                try {
                    waiter.grantedToken = Long.parseLong(message.substring(tokenStart + FairLockScripts.HANDED_OVER.length()));
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
