package io.github.redislock.core;

/**
 * Work to run while holding a lock, for {@link RedisLockTemplate#execute}.
 *
 * @param <T> the result type
 * @param <E> the checked exception the work may throw ({@code RuntimeException} when none)
 */
@FunctionalInterface
public interface LockCallback<T, E extends Throwable> {

    T doInLock(LockHandle lock) throws E;
}
