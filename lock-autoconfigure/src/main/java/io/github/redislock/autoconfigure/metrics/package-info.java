/**
 * Micrometer metrics ({@code redis.lock.*}, tagged with the lock backend's bean name) and observations of lock waits,
 * auto-configured when Micrometer and a registry are present.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
