package io.github.redislock.annotation;

/** What a {@link DistributedLock} method does when its lock is not acquired within the wait time. */
public enum OnFailure {

    /** Throw {@link io.github.redislock.core.LockNotAcquiredException} naming the key and the wait. */
    THROW,

    /**
     * Do not run the method; return {@code null}, {@code Optional.empty()} or an empty collection/map by
     * return type ({@code void} methods just return). Not allowed on primitive return types.
     * Redis failures still throw.
     */
    SKIP
}
