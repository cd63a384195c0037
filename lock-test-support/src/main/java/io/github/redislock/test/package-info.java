/**
 * Test infrastructure, never a dependency of the starter: real {@code redis-server} processes on free loopback
 * ports (a single server, a cluster, Sentinel with replicas, independent masters), started and stopped by the
 * tests themselves through {@link io.github.redislock.test.RedisExtension} and the {@code @WithRedis*}
 * annotations, and helpers for concurrency checks such as recorded critical-section
 * {@link io.github.redislock.test.Intervals}. No Spring.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.test;

import org.jspecify.annotations.NullMarked;
