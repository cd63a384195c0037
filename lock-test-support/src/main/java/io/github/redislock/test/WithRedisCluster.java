package io.github.redislock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Starts a Redis Cluster on free loopback ports before the test class and stops it after. The class's
 * fields of type {@link RedisClusterProcesses} are set to it (static ones before {@code @BeforeAll},
 * instance ones before each test), and methods may take it as a parameter.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisExtension.class)
public @interface WithRedisCluster {

    /** How many masters (at least 3) share the 16384 slots. */
    int masters() default 3;

    /** Whether every test gets a cluster of its own (for tests that kill, pause or reconfigure a node). */
    boolean freshForEachTest() default false;
}
