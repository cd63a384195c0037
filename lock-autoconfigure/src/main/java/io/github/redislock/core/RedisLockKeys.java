package io.github.redislock.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The Redis key schema. Every key of one lock shares one cluster hash tag, the user's key in braces,
 * so every script touches a single slot: {@code <prefix>:{orders:42}} is the lock,
 * {@code <prefix>:{orders:42}:fence} its fencing counter, and {@code <prefix>:{orders:42}:waiters}
 * and {@code <prefix>:{orders:42}:waiters:expiry} the clients waiting for it (by arrival, by expiry). Each client listens on its own channel {@code <prefix>:wake:<client id>}.
 * <p>
 * Redis hashes the text between the first {@code '{'} and the first {@code '}'} after it, unless that
 * text is empty. A key with a {@code '}'} inside hashes by its text up to that brace, the same for all
 * four names, so it keeps the plain form. A key that begins with {@code '}'} would leave the tag empty
 * and spread its four names over different slots (CROSSSLOT), so it is stored percent-encoded under
 * {@code <prefix>:%{...}} instead ({@code '%'}, {@code '{'} and {@code '}'} written as {@code %25},
 * {@code %7B}, {@code %7D}): {@code }x} becomes {@code <prefix>:%{%7Dx}}. No plain name starts with
 * {@code <prefix>:%}, so the two forms never meet.
 */
final class RedisLockKeys {

    /** The longest key accepted, in UTF-8 bytes. */
    static final int MAX_KEY_BYTES = 512;

    private static final String FENCE = ":fence";
    private static final String WAITERS = ":waiters";
    private static final String WAITER_EXPIRIES = ":waiters:expiry";
    private static final byte[] FENCE_BYTES = FENCE.getBytes(StandardCharsets.UTF_8);
    private static final byte[] WAITERS_BYTES = WAITERS.getBytes(StandardCharsets.UTF_8);
    private static final byte[] WAITER_EXPIRIES_BYTES = WAITER_EXPIRIES.getBytes(StandardCharsets.UTF_8);

    private final String prefix;

    RedisLockKeys(String prefix) {
        if (prefix == null || prefix.isBlank()) {
            throw new IllegalArgumentException("key prefix must not be blank");
        }
        if (prefix.contains("{") || prefix.contains("}")) {
            throw new IllegalArgumentException("key prefix must not contain '{' or '}' (it would break the hash tag): " + prefix);
        }
        this.prefix = prefix;
    }

    String prefix() {
        return prefix;
    }

    String lock(String key) {
        if (key.startsWith("}")) {
            return prefix + ":%{" + encodeTag(key) + "}";
        }
        return prefix + ":{" + key + "}";
    }

    private static String encodeTag(String key) {
        StringBuilder encoded = new StringBuilder(key.length() + 8);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '%' -> encoded.append("%25");
                case '{' -> encoded.append("%7B");
                case '}' -> encoded.append("%7D");
                default -> encoded.append(c);
            }
        }
        return encoded.toString();
    }

    String fence(String key) {
        return lock(key) + FENCE;
    }

    String waiters(String key) {
        return lock(key) + WAITERS;
    }

    String waiterExpiries(String key) {
        return lock(key) + WAITER_EXPIRIES;
    }

    /**
     * The exclusive lock's four keys, {@link #lock}, {@link #fence}, {@link #waiters} and {@link #waiterExpiries},
     * encoded as UTF-8 for a script call: the name encoded once and each suffix appended to its bytes.
     */
    byte[][] exclusiveKeysEncoded(String key) {
        byte[] lock = lock(key).getBytes(StandardCharsets.UTF_8);
        return new byte[][] {lock, suffixed(lock, FENCE_BYTES), suffixed(lock, WAITERS_BYTES),
                suffixed(lock, WAITER_EXPIRIES_BYTES)};
    }

    private static byte[] suffixed(byte[] base, byte[] suffix) {
        byte[] joined = java.util.Arrays.copyOf(base, base.length + suffix.length);
        System.arraycopy(suffix, 0, joined, base.length, suffix.length);
        return joined;
    }

    /**
     * The keys of {@code key}'s read/write lock, in the order its scripts take them: writer, readers, read epoch,
     * fencing counter, waiting writers, waiting clients by arrival and by expiry. Apart from the exclusive lock's.
     */
    List<String> readWrite(String key) {
        String base = lock(key) + ":rw";
        return List.of(base + ":writer", base + ":readers", base + ":epoch", base + ":fence", base + ":writers-waiting",
                base + ":waiters", base + ":waiters:expiry");
    }

    /** The waiters of a fair lock, one per waiting thread, by arrival. */
    String fairQueue(String key) {
        return lock(key) + ":queue";
    }

    /** When each fair-lock waiter's entry goes stale unless refreshed. */
    String fairQueueExpiries(String key) {
        return lock(key) + ":queue:expiry";
    }

    /** A semaphore's holders by the end of their leases (zset); with the other semaphore keys under the lock's tag. */
    String semaphoreHolders(String key) {
        return lock(key) + ":semaphore:holders";
    }

    /** The permits each holder of a semaphore holds (hash). */
    String semaphorePermits(String key) {
        return lock(key) + ":semaphore:permits";
    }

    /** A semaphore's current permit limit. */
    String semaphoreLimit(String key) {
        return lock(key) + ":semaphore:limit";
    }

    /** A semaphore's fencing counter. */
    String semaphoreFence(String key) {
        return lock(key) + ":semaphore:fence";
    }

    /** Threads waiting for a semaphore's permits, by arrival (zset). */
    String semaphoreWaiters(String key) {
        return lock(key) + ":semaphore:waiters";
    }

    /** Threads waiting for a semaphore's permits, by when their entry goes stale (zset). */
    String semaphoreWaiterExpiries(String key) {
        return lock(key) + ":semaphore:waiters:expiry";
    }

    String wakeChannelPrefix() {
        return prefix + ":wake:";
    }

    /**
     * Checks a user's lock key.
     *
     * @throws IllegalArgumentException naming the problem: null, blank, over 512 bytes, or control characters
     */
    static String validate(String key) {
        if (key == null) {
            throw new IllegalArgumentException("lock key must not be null");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException("lock key must not be blank");
        }
        for (int i = 0; i < key.length(); i++) {
            if (Character.isISOControl(key.charAt(i))) {
                throw new IllegalArgumentException("lock key must not contain control characters (at index " + i + "): "
                        + key.replaceAll("\\p{Cntrl}", "?"));
            }
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("lock key must be at most " + MAX_KEY_BYTES + " bytes, was " + bytes
                    + " bytes: " + key.substring(0, 40) + "...");
        }
        return key;
    }
}
