/**
 * Spring Integration on the lock engine: {@link io.github.redislock.integration.RedisLockOperationsRegistry}, a
 * {@code LockRegistry} whose locks are the engine's reentrant, fenced, watchdog-renewed locks, for
 * {@code LockRegistry} users and leader election with {@code LockRegistryLeaderInitiator}. Without Spring Boot.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.integration;

import org.jspecify.annotations.NullMarked;
