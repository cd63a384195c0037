/**
 * Boot wiring of the ShedLock provider (redis-lock-shedlock): a {@code LockProvider} on the application's lock
 * template when ShedLock and the module are on the class path and the application declares no provider of its own.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.autoconfigure.shedlock;

import org.jspecify.annotations.NullMarked;
