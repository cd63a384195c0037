package io.github.redislock.core;

import java.nio.charset.StandardCharsets;

/**
 * The Redis key schema. Every key of one lock shares one cluster hash tag, the user's key in braces,
 * so every script touches a single slot: {@code <prefix>:{orders:42}} is the lock,
 * {@code <prefix>:{orders:42}:fence} its fencing counter, and {@code <prefix>:{orders:42}:waiters}
 * and {@code <prefix>:{orders:42}:waiters:expiry} the clients waiting for it (by arrival, by expiry). Each client listens on its own channel {@code <prefix>:wake:<client id>}.
 */
public final class RedisLockKeys {

    /** The longest key accepted, in UTF-8 bytes. */
    public static final int MAX_KEY_BYTES = 512;

    private final String prefix;

    public RedisLockKeys(String prefix) {
        if (prefix == null || prefix.isBlank()) {
            throw new IllegalArgumentException("key prefix must not be blank");
        }
        if (prefix.contains("{") || prefix.contains("}")) {
            throw new IllegalArgumentException("key prefix must not contain '{' or '}' (it would break the hash tag): " + prefix);
        }
        this.prefix = prefix;
    }

    public String prefix() {
        return prefix;
    }

    public String lock(String key) {
        return prefix + ":{" + key + "}";
    }

    public String fence(String key) {
        return lock(key) + ":fence";
    }

    public String waiters(String key) {
        return lock(key) + ":waiters";
    }

    public String waiterExpiries(String key) {
        return lock(key) + ":waiters:expiry";
    }

    public String wakeChannelPrefix() {
        return prefix + ":wake:";
    }

    /**
     * Checks a user's lock key.
     *
     * @throws IllegalArgumentException naming the problem: null, blank, over 512 bytes, or control characters
     */
    public static String validate(String key) {
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
