/**
 * A ShedLock {@code LockProvider} on the redis-lock engine: {@link io.github.redislock.shedlock.RedisLockTemplateLockProvider}
 * runs {@code @SchedulerLock} jobs on the engine's exclusive, fenced locks, with ShedLock's {@code lockAtMostFor} as
 * the lease, {@code lockAtLeastFor} as the minimum hold, and {@code extend}. No Spring dependency.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.shedlock;

import org.jspecify.annotations.NullMarked;
