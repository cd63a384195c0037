package io.github.redislock.annotation;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockType;
import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.RedisLockTemplate;
import org.jspecify.annotations.Nullable;

/**
 * The lock types only a {@link RedisLockTemplate} serves, as {@code @DistributedLock} takes them: {@code FAIR},
 * {@code READ}, {@code WRITE} and semaphores ({@code permits}), which are what one Redis does, not a quorum of
 * independent masters. The one place the annotation support names a concrete backend.
 */
final class RedisLockTemplateCalls {

    private RedisLockTemplateCalls() {
    }

    /** Whether a method with this type and {@code permits} needs a {@link RedisLockTemplate} for its backend. */
    static boolean needsTemplate(LockType type, int permits) {
        return permits > 0 || type != LockType.EXCLUSIVE;
    }

    /**
     * How a method of this type takes its locks on {@code backend}, or {@code null} when {@code backend} is not a
     * {@link RedisLockTemplate}. The fair lock and the semaphore take the one key the parser allows them.
     */
    static LockBackend.@Nullable Acquisition acquisition(LockType type, int permits, Object backend) {
        if (!(backend instanceof RedisLockTemplate template)) {
            return null;
        }
        if (permits > 0) {
            return (keys, options, throwOnTimeout) -> throwOnTimeout
                    ? Optional.of(new SingleLock(template.semaphore(keys.first(), permits).acquire(options)))
                    : template.semaphore(keys.first(), permits).tryAcquire(options).map(SingleLock::new);
        }
        return switch (type) {
            case FAIR -> (keys, options, throwOnTimeout) -> throwOnTimeout
                    ? Optional.of(new SingleLock(template.fairLock(keys.first()).acquire(options)))
                    : template.fairLock(keys.first()).tryAcquire(options).map(SingleLock::new);
            case READ, WRITE -> (keys, options, throwOnTimeout) -> throwOnTimeout
                    ? Optional.of(template.acquireAll(keys, options, type))
                    : template.tryAcquireAll(keys, options, type);
            default -> LockBackend.exclusive(template);
        };
    }

    /**
     * A fair lock or a semaphore permit on one key, seen as the {@link MultiLockHandle} the interceptor releases and
     * reads fencing tokens from, so these methods share everything else (skipping, {@link LockContext},
     * {@link FencingToken}, release after the transaction).
     */
    private static final class SingleLock implements MultiLockHandle {

        private final LockHandle handle;

        SingleLock(LockHandle handle) {
            this.handle = handle;
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
                throw new IllegalArgumentException("this lock is on '" + handle.key() + "', not '" + key + "'");
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
}
