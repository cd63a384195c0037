/**
 * The benchmark harness (not published): {@link io.github.redislock.bench.LockBenchmark} runs every scenario against
 * redis-lock on Jedis and Lettuce and against the peers (Redisson, Spring Integration's {@code RedisLockRegistry}) in
 * one run, each on its own client, and writes {@code docs/benchmarks.md} and its chart from what it measured.
 */
@NullMarked
package io.github.redislock.bench;

import org.jspecify.annotations.NullMarked;
