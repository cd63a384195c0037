package io.github.redislock.autoconfigure;

import io.github.redislock.core.LockHandle;
import org.springframework.context.ApplicationEvent;

/**
 * Published when a held lock is found lost before its release (see
 * {@link io.github.redislock.core.LockLostListener}); listen with {@code @EventListener}.
 */
public class LockLostEvent extends ApplicationEvent {

    private final String key;
    private final long fencingToken;
    private final String reason;

    public LockLostEvent(Object source, LockHandle lock, String reason) {
        super(source);
        this.key = lock.key();
        this.fencingToken = lock.fencingToken();
        this.reason = reason;
    }

    public String getKey() {
        return key;
    }

    public long getFencingToken() {
        return fencingToken;
    }

    public String getReason() {
        return reason;
    }
}
