/**
 * A ShedLock {@code LockProvider} on the redis-lock engine: {@link io.github.redislock.shedlock.RedisLockTemplateLockProvider}
 * runs {@code @SchedulerLock} jobs on the engine's exclusive, fenced locks, with ShedLock's {@code lockAtMostFor} as
 * the lease, {@code lockAtLeastFor} as the minimum hold, and {@code extend}. No Spring dependency.
 */
package io.github.redislock.shedlock;
