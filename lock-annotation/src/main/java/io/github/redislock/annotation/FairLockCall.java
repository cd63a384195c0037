package io.github.redislock.annotation;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.RedisLockTemplate;

/**
 * A {@code type = FAIR} method's lock: the template's fair lock on its one key, seen as the
 * {@link MultiLockHandle} the interceptor releases and reads fencing tokens from, so fair methods share
 * everything else (skipping, {@link LockContext}, {@link FencingToken}, release after the transaction).
 */
final class FairLockCall implements MultiLockHandle {

    private final LockHandle handle;

    private FairLockCall(LockHandle handle) {
        this.handle = handle;
    }

    /**
     * Waits in line for the key's fair lock.
     *
     * @param throwOnTimeout whether a wait that ends without the lock throws (else empty)
     */
    static Optional<MultiLockHandle> acquire(RedisLockTemplate template, String key, LockOptions options,
            boolean throwOnTimeout) {
        if (throwOnTimeout) {
            return Optional.of(new FairLockCall(template.fairLock(key).acquire(options)));
        }
        return template.fairLock(key).tryAcquire(options).map(FairLockCall::new);
    }

    @Override
    public List<String> keys() {
        return List.of(handle.key());
    }

    @Override
    public Map<String, Long> fencingTokens() {
        return Map.of(handle.key(), handle.fencingToken());
    }

    @Override
    public long fencingToken(String key) {
        if (!handle.key().equals(key)) {
            throw new IllegalArgumentException("this fair lock is on '" + handle.key() + "', not '" + key + "'");
        }
        return handle.fencingToken();
    }

    @Override
    public boolean isHeld() {
        return handle.isHeld();
    }

    @Override
    public void release() {
        handle.release();
    }
}
