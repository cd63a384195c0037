/**
 * Test support for applications that use redis-lock (the {@code redis-lock-test} artifact, in test scope):
 * {@link io.github.redislock.testing.WithRedisServer} runs a real {@code redis-server} without Docker and points
 * {@code spring.data.redis.*} at it, {@link io.github.redislock.testing.DistributedLockAssert} checks that code runs
 * under a distributed lock, and {@link io.github.redislock.testing.LockTestSupport#holdElsewhere} makes a lock
 * unavailable so a test can exercise {@code onFailure}.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.testing;

import org.jspecify.annotations.NullMarked;
