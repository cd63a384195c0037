/**
 * Declarative locking for Spring applications: {@link io.github.redislock.annotation.DistributedLock} on a method,
 * and the Spring AOP advisor that takes the locks around its calls.
 * <p>
 * {@link io.github.redislock.annotation.DistributedLockAdvisor} is what a configuration declares (a plain Spring
 * {@code @Configuration} will do; no Spring Boot is needed). The annotations are parsed and checked once per
 * method at start-up, their SpEL keys resolved per call, and the locks taken through the engine's
 * {@link io.github.redislock.core.LockOperations}; a call may read its fencing token through
 * {@link io.github.redislock.annotation.LockContext} or a {@link io.github.redislock.annotation.FencingToken}
 * parameter.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.annotation;

import org.jspecify.annotations.NullMarked;
