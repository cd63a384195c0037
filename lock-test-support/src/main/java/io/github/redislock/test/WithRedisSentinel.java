package io.github.redislock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Starts a Redis Sentinel deployment (master, replica, three sentinels) on free loopback ports before
 * the test class and stops it after. The class's fields of type {@link RedisSentinelProcesses} are set
 * to it (static ones before {@code @BeforeAll}, instance ones before each test), and methods may take
 * it as a parameter.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisExtension.class)
public @interface WithRedisSentinel {

    /** Whether every test gets a deployment of its own (for tests that fail the master over). */
    boolean freshForEachTest() default false;
}
