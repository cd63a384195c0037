package io.github.redislock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code long} or {@code Long} parameter of a {@link DistributedLock} method that receives the
 * lock's fencing token. Callers pass any placeholder (say {@code 0}); the advisor replaces it.
 * Only for single-key locks; with several keys use {@link LockContext#fencingToken(String)}.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencingToken {
}
