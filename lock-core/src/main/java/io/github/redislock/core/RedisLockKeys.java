package io.github.redislock.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

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
    /** Owner ids whose acquisition requests were given up, by every lock type of the name; see {@code lib/stale.lua}. */
    private static final String ABANDONED = ":abandoned";
    private static final String WAITERS = ":waiters";
    private static final String WAITER_EXPIRIES = ":waiters:expiry";
    private static final String FAIR_QUEUE = ":queue";
    private static final String FAIR_QUEUE_EXPIRIES = ":queue:expiry";
    private static final String SEMAPHORE_HOLDERS = ":semaphore:holders";
    private static final String SEMAPHORE_PERMITS = ":semaphore:permits";
    private static final String SEMAPHORE_LIMIT = ":semaphore:limit";
    private static final String SEMAPHORE_FENCE = ":semaphore:fence";
    private static final String SEMAPHORE_WAITERS = ":semaphore:waiters";
    private static final String SEMAPHORE_WAITER_EXPIRIES = ":semaphore:waiters:expiry";
    /** The read/write lock's keys after the lock's name, in the order its scripts take them. */
    private static final List<String> READ_WRITE = List.of(":rw:writer", ":rw:readers", ":rw:epoch", ":rw:fence",
            ":rw:writers-waiting", ":rw:waiters", ":rw:waiters:expiry");

    // each script's keys after the lock's name, encoded once, in the order the script takes them ("" is the lock)
    private static final byte[][] EXCLUSIVE_SUFFIXES = encode(List.of("", FENCE, WAITERS, WAITER_EXPIRIES));
    private static final byte[][] EXCLUSIVE_ACQUIRE_SUFFIXES = encode(List.of("", FENCE, WAITERS, WAITER_EXPIRIES,
            ABANDONED));
    private static final byte[][] FAIR_SUFFIXES = encode(List.of("", FENCE, FAIR_QUEUE, FAIR_QUEUE_EXPIRIES, ABANDONED));
    private static final byte[][] FAIR_RELEASE_SUFFIXES = encode(List.of("", FENCE, FAIR_QUEUE, FAIR_QUEUE_EXPIRIES,
            WAITERS, WAITER_EXPIRIES));
    private static final byte[][] READ_WRITE_SUFFIXES = encode(READ_WRITE);
    private static final byte[][] READ_WRITE_ACQUIRE_SUFFIXES = encode(Stream.concat(READ_WRITE.stream(),
            Stream.of(ABANDONED)).toList());
    private static final byte[][] SEMAPHORE_ACQUIRE_SUFFIXES = encode(List.of(SEMAPHORE_HOLDERS, SEMAPHORE_PERMITS,
            SEMAPHORE_LIMIT, SEMAPHORE_FENCE, SEMAPHORE_WAITERS, SEMAPHORE_WAITER_EXPIRIES, ABANDONED));
    private static final byte[][] SEMAPHORE_RELEASE_SUFFIXES = encode(List.of(SEMAPHORE_HOLDERS, SEMAPHORE_PERMITS,
            SEMAPHORE_WAITERS, SEMAPHORE_WAITER_EXPIRIES, SEMAPHORE_LIMIT, SEMAPHORE_FENCE));

    /** How many recently encoded key sets {@link #encoded} keeps (a power of two): about 40 KB at most. */
    private static final int RECENT_SLOTS = 256;

    private final String prefix;
    private final byte[] wakeChannelPrefixEncoded;
    /**
     * Key sets encoded lately, one slot per hash of the lock's name and script: a lock taken again and again (a hot
     * key, a scheduled job) encodes its names once instead of at every call; a slot holds the latest key set to hash to it.
     */
    private final Encoded[] recent = new Encoded[RECENT_SLOTS];
    private final Name[] recentNames = new Name[RECENT_SLOTS];

    RedisLockKeys(String prefix) {
        if (prefix == null || prefix.isBlank()) {
            throw new IllegalArgumentException("key prefix must not be blank");
        }
        if (prefix.contains("{") || prefix.contains("}")) {
            throw new IllegalArgumentException("key prefix must not contain '{' or '}' (it would break the hash tag): " + prefix);
        }
        this.prefix = prefix;
        this.wakeChannelPrefixEncoded = wakeChannelPrefix().getBytes(StandardCharsets.UTF_8);
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

    /**
     * The owner ids whose acquisition requests were given up (zset: owner id to the highest attempt given up), for
     * every lock type of {@code key}: such a request changes nothing when it lands late; see {@code lib/stale.lua}.
     */
    String abandoned(String key) {
        return lock(key) + ABANDONED;
    }

    String waiters(String key) {
        return lock(key) + WAITERS;
    }

    String waiterExpiries(String key) {
        return lock(key) + WAITER_EXPIRIES;
    }

    /**
     * The exclusive lock's four keys, {@link #lock}, {@link #fence}, {@link #waiters} and {@link #waiterExpiries},
     * encoded as UTF-8 for a script call.
     */
    byte[][] exclusiveKeysEncoded(String key) {
        return encoded(key, EXCLUSIVE_SUFFIXES);
    }

    /**
     * The exclusive lock's keys for its acquisition: those of {@link #exclusiveKeysEncoded}, then {@link #abandoned}.
     */
    byte[][] exclusiveAcquireKeysEncoded(String key) {
        return encoded(key, EXCLUSIVE_ACQUIRE_SUFFIXES);
    }

    /**
     * The fair lock's keys for its acquisition: {@link #lock}, {@link #fence}, {@link #fairQueue}, its expiries,
     * {@link #abandoned}.
     */
    byte[][] fairKeysEncoded(String key) {
        return encoded(key, FAIR_SUFFIXES);
    }

    /** The fair lock's keys for its release: those of {@link #fairKeysEncoded}, then {@link #waiters} and their expiries. */
    byte[][] fairReleaseKeysEncoded(String key) {
        return encoded(key, FAIR_RELEASE_SUFFIXES);
    }

    /** The keys of {@link #readWrite}, encoded. */
    byte[][] readWriteEncoded(String key) {
        return encoded(key, READ_WRITE_SUFFIXES);
    }

    /** The keys of {@link #readWrite}, then {@link #abandoned}, encoded: a read or write acquisition's. */
    byte[][] readWriteAcquireEncoded(String key) {
        return encoded(key, READ_WRITE_ACQUIRE_SUFFIXES);
    }

    /** The semaphore's keys for its acquisition: holders, permits, limit, fence, waiters, waiter expiries, abandoned. */
    byte[][] semaphoreAcquireKeysEncoded(String key) {
        return encoded(key, SEMAPHORE_ACQUIRE_SUFFIXES);
    }

    /** The semaphore's keys for its release: holders, permits, waiters, waiter expiries, limit, fence. */
    byte[][] semaphoreReleaseKeysEncoded(String key) {
        return encoded(key, SEMAPHORE_RELEASE_SUFFIXES);
    }

    /**
     * {@link #lock}'s name followed by each of {@code suffixes}, as UTF-8 for a script call: the name is encoded once and
     * each suffix appended to its bytes.
     */
    private byte[][] encoded(String key, byte[][] suffixes) {
        int slot = (key.hashCode() * 31 + System.identityHashCode(suffixes)) & (RECENT_SLOTS - 1);
        Encoded seen = recent[slot];
        if (seen != null && seen.suffixes == suffixes && seen.key.equals(key)) {
            return seen.keys;
        }
        byte[] lock = lock(key).getBytes(StandardCharsets.UTF_8);
        byte[][] encoded = new byte[suffixes.length][];
        for (int i = 0; i < suffixes.length; i++) {
            byte[] suffix = suffixes[i];
            if (suffix.length == 0) {
                encoded[i] = lock;
            } else {
                byte[] joined = Arrays.copyOf(lock, lock.length + suffix.length);
                System.arraycopy(suffix, 0, joined, lock.length, suffix.length);
                encoded[i] = joined;
            }
        }
        recent[slot] = new Encoded(key, suffixes, encoded); // a racy write: its final fields publish it whole
        return encoded;
    }

    /** One lock name's keys for one script, encoded; the arrays are shared, never written to. */
    private record Encoded(String key, byte[][] suffixes, byte[][] keys) {
    }

    /**
     * The lock's name itself (not a Redis key: the name as clients know it, which a release publishes to the waiting
     * clients), as UTF-8 for a script argument; recently used names are encoded once, as {@link #exclusiveKeysEncoded}'s
     * keys are. The array is shared, never written to.
     */
    byte[] nameEncoded(String key) {
        int slot = key.hashCode() & (RECENT_SLOTS - 1);
        Name seen = recentNames[slot];
        if (seen != null && seen.key.equals(key)) {
            return seen.bytes;
        }
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        recentNames[slot] = new Name(key, bytes); // a racy write: its final fields publish it whole
        return bytes;
    }

    private record Name(String key, byte[] bytes) {
    }

    private static byte[][] encode(List<String> suffixes) {
        return suffixes.stream().map(suffix -> suffix.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
    }

    /**
     * The keys of {@code key}'s read/write lock, in the order its scripts take them: writer, readers, read epoch,
     * fencing counter, waiting writers, waiting clients by arrival and by expiry. Apart from the exclusive lock's.
     */
    List<String> readWrite(String key) {
        String lock = lock(key);
        return READ_WRITE.stream().map(suffix -> lock + suffix).toList();
    }

    /** The waiters of a fair lock, one per waiting thread, by arrival. */
    String fairQueue(String key) {
        return lock(key) + FAIR_QUEUE;
    }

    /** When each fair-lock waiter's entry goes stale unless refreshed. */
    String fairQueueExpiries(String key) {
        return lock(key) + FAIR_QUEUE_EXPIRIES;
    }

    /** A semaphore's holders by the end of their leases (zset); with the other semaphore keys under the lock's tag. */
    String semaphoreHolders(String key) {
        return lock(key) + SEMAPHORE_HOLDERS;
    }

    /** The permits each holder of a semaphore holds (hash). */
    String semaphorePermits(String key) {
        return lock(key) + SEMAPHORE_PERMITS;
    }

    /** A semaphore's current permit limit. */
    String semaphoreLimit(String key) {
        return lock(key) + SEMAPHORE_LIMIT;
    }

    /** A semaphore's fencing counter. */
    String semaphoreFence(String key) {
        return lock(key) + SEMAPHORE_FENCE;
    }

    /** Threads waiting for a semaphore's permits, by arrival (zset). */
    String semaphoreWaiters(String key) {
        return lock(key) + SEMAPHORE_WAITERS;
    }

    /** Threads waiting for a semaphore's permits, by when their entry goes stale (zset). */
    String semaphoreWaiterExpiries(String key) {
        return lock(key) + SEMAPHORE_WAITER_EXPIRIES;
    }

    String wakeChannelPrefix() {
        return prefix + ":wake:";
    }

    /** {@link #wakeChannelPrefix()} as UTF-8, encoded once. */
    byte[] wakeChannelPrefixEncoded() {
        return wakeChannelPrefixEncoded;
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
