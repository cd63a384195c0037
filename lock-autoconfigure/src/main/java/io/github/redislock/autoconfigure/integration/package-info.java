/**
 * Spring Boot wiring of the Spring Integration {@code LockRegistry} on the lock engine
 * ({@code redis-lock-spring-integration}), active only when Spring Integration and that module are on the class path.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.autoconfigure.integration;

import org.jspecify.annotations.NullMarked;
