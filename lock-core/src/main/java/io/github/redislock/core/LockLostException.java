package io.github.redislock.core;

/**
 * A lock was released (or re-entered) after it had been lost: its lease ended or Redis lost it while
 * the holder was still working, so another owner may have held it at the same time.
 */
public class LockLostException extends IllegalStateException {

    private final String key;
    private final long fencingToken;

    public LockLostException(String key, long fencingToken, String reason) {
        super("Lock '" + key + "' (fencing token " + fencingToken + ") was lost before it was released (" + reason
                + "); the data it protected may have been changed by another holder meanwhile");
        this.key = key;
        this.fencingToken = fencingToken;
    }

    public String getKey() {
        return key;
    }

    public long getFencingToken() {
        return fencingToken;
    }
}
