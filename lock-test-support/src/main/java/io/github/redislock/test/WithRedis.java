package io.github.redislock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Starts one {@code redis-server} on a free loopback port before the test class and stops it after.
 * The class's fields of type {@link RedisServerProcess} are set to it (static ones before
 * {@code @BeforeAll}, instance ones before each test), and methods may take it as a parameter.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisExtension.class)
public @interface WithRedis {

    /** Extra {@code redis-server} options, e.g. {@code {"--appendonly", "yes"}}. */
    String[] args() default {};

    /** Whether every test gets a server of its own (for tests that kill, pause or restart it). */
    boolean freshForEachTest() default false;
}
