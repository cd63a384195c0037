/**
 * Distributed locks on Redis, without Spring Boot: the API a program uses and the engine behind it.
 * <p>
 * The public types are the API: {@link io.github.redislock.core.LockOperations} (implemented by
 * {@link io.github.redislock.core.RedisLockTemplate} for one Redis, Sentinel or Cluster, and by
 * {@link io.github.redislock.core.RedlockTemplate} for a quorum of independent masters), the lock objects
 * ({@link io.github.redislock.core.RedisLock}, {@link io.github.redislock.core.RedisReadWriteLock},
 * {@link io.github.redislock.core.RedisSemaphore}), {@link io.github.redislock.core.LockHandle},
 * {@link io.github.redislock.core.LockOptions}, observers and diagnostics. Everything else is the engine and is
 * package-private: the lock types, the in-JVM queues, the wait loop on pub/sub, the watchdog that renews leases,
 * and the Lua scripts (resources under {@code io/github/redislock}) that do each step atomically in Redis.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.core;

import org.jspecify.annotations.NullMarked;
