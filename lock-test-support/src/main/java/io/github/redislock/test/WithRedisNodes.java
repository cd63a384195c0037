package io.github.redislock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Starts independent {@code redis-server} masters (the nodes of a Redlock) on free loopback ports before the test
 * class and stops them after. The class's fields of type {@link RedisNodes} are set to them (static ones before
 * {@code @BeforeAll}, instance ones before each test), and methods may take them as a parameter.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisExtension.class)
public @interface WithRedisNodes {

    /** How many independent masters. */
    int value() default 5;

    /** Whether every test gets nodes of its own (for tests that kill or restart nodes). */
    boolean freshForEachTest() default false;
}
