package io.github.redislock.core;

import java.nio.charset.StandardCharsets;

import org.springframework.dao.PermissionDeniedDataAccessException;

/**
 * Tells a Redis ACL denial from other Redis errors, and says what it denied. A denial is not retried: a permission does not
 * appear by waiting, so a lock call that Redis refuses fails at once, naming the lock's Redis key and quoting Redis, whose
 * words name the command, key or channel (docs/security.md lists what the locks need).
 */
final class AclDenials {

    /** Where docs/security.md is: the ACL the locks need. */
    static final String SEE_DOCS = "see docs/security.md for the ACL the locks need";

    private AclDenials() {
    }

    /** A script call on {@code keys} that Redis refused as {@code e} said; {@code e} itself if it is no denial. */
    static RuntimeException forScript(RuntimeException e, byte[][] keys) {
        String words = redisWords(e);
        if (words == null) {
            return e;
        }
        String key = keys.length == 0 ? "" : " on key " + new String(keys[0], StandardCharsets.UTF_8);
        return new PermissionDeniedDataAccessException("Redis denied the lock's script" + key + " to this client's user: "
                + words + " (" + SEE_DOCS + ")", e);
    }

    /** The subscription to {@code channel} that Redis refused as {@code e} said; {@code null} if {@code e} is no denial. */
    static PermissionDeniedDataAccessException forSubscription(Throwable e, String channel) {
        String words = redisWords(e);
        return words == null ? null : new PermissionDeniedDataAccessException("Redis denied this client's subscription "
                + "to its release channel " + channel + ", so it cannot wait for a lock: " + words + " (" + SEE_DOCS + ")", e);
    }

    /**
     * The words of the innermost denial among {@code e} and its causes, or {@code null}: {@code NOPERM} for a command
     * the client sent, and for one a script calls, Redis 7.0's "The user executing the script can't ..." and 7.2's
     * "ACL failure in script".
     */
    private static String redisWords(Throwable e) {
        String words = null;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message != null && (message.contains("NOPERM") || message.contains("The user executing the script can't")
                    || message.contains("ACL failure in script"))) {
                words = message;
            }
        }
        return words;
    }
}
