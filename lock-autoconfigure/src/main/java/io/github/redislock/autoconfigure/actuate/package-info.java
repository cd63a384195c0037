/**
 * The Actuator side of the locks: the {@code locks} endpoint (what each lock backend bean holds and waits for, by
 * bean name) and the {@code lock} health contributor, auto-configured when Actuator is present.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
