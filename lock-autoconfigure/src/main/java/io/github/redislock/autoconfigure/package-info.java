/**
 * Spring Boot wiring for redis-lock: the auto-configurations that declare the lock templates and the
 * {@code @DistributedLock} advisor from {@code spring.data.redis.*} and the {@code redis-lock.*} properties,
 * and, when Actuator and Micrometer are present, the {@code /actuator/locks} endpoint, the health indicator,
 * metrics and observations.
 * <p>
 * Nothing here locks: the engine is {@code io.github.redislock.core}, the annotation support
 * {@code io.github.redislock.annotation}.
 * <p>
 * Values are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.github.redislock.autoconfigure;

import org.jspecify.annotations.NullMarked;
