/**
 * The sample application: a Spring Boot app using the starter as a user would, with one
 * {@code @DistributedLock} demo per lock type, a fenced ledger and a scheduled report job; {@code docs/sample-app.md}
 * walks through it.
 */
@NullMarked
package io.github.redislock.sample;

import org.jspecify.annotations.NullMarked;
