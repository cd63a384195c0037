package io.github.redislock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an instance field of a test class run with {@link RedisExtension} ({@link WithRedis} and the like) that the
 * extension sets before each test: a {@code String} to a Redis key no other test of the class uses (the test
 * method's name), an {@code ExecutorService} to a thread pool of the test's own, stopped after the test (its threads
 * interrupted) before the test's clients are closed.
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface PerTest {
}
