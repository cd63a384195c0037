package io.github.redislock.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the test class against a real {@code redis-server}: the JVM's shared {@link TestRedisServer}, started at first
 * use without Docker (the binary on the PATH, else an embedded one) and stopped when the JVM exits.
 * <ul>
 * <li>On a Spring test ({@code @SpringBootTest}, {@code @SpringJUnitConfig}, ...), the application context gets
 * {@code spring.data.redis.host} and {@code spring.data.redis.port} pointing at it, taking precedence over the
 * application's own (like {@code @DynamicPropertySource}, they are added when the context is prepared, after
 * Spring Boot's {@code EnvironmentPostProcessor}s ran), and a {@link TestRedisServer} bean. Every test class with the
 * annotation shares one server, so Spring's context cache still works across them.</li>
 * <li>On any JUnit 5 test, fields of type {@link TestRedisServer} (static or not) are set to it, and test and
 * lifecycle methods may take it as a parameter.</li>
 * </ul>
 * <pre>{@code
 * @SpringBootTest
 * @WithRedisServer
 * class OrderServiceTest {
 *     @Autowired OrderService orders;
 *     @Autowired LockOperations locks;
 *
 *     @Test
 *     void payRunsUnderTheOrdersLock() {
 *         DistributedLockAssert.assertRunsUnderLock(locks, "order:42", () -> orders.pay(42));
 *     }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisServerExtension.class)
public @interface WithRedisServer {
}
