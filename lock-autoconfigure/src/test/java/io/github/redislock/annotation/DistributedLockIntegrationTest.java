package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.redislock.annotation.LockedServices.ClassLevel;
import io.github.redislock.annotation.LockedServices.Order;
import io.github.redislock.annotation.LockedServices.Orders;
import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Concurrently;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Every annotation behaviour on a real redis-server, once with Jedis and once with Lettuce. */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"jedis", "lettuce"})
@WithRedis
class DistributedLockIntegrationTest {

    static RedisServerProcess server;

    @Parameter
    String clientType;

    private void run(Consumer<AssertableApplicationContext> test) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + server.port(), "spring.data.redis.client-type=" + clientType,
                        "test.lock-wait=300ms")
                .withBean(Orders.class)
                .withBean(ClassLevel.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    test.accept(context);
                });
    }

    @Test
    void sixteenThreadsInTwoApplicationsNeverLoseAnUpdate() throws Exception {
        server.command("SET", "counter", "0");
        run(a -> run(b -> {
            List<Orders> orders = List.of(a.getBean(Orders.class), b.getBean(Orders.class));
            Concurrently.run(16, 10, thread -> orders.get(thread % 2).incrementCounter());
            assertThat(server.command("GET", "counter")).isEqualTo("160");
        }));
    }

    @Test
    void equalArraysAsKeysExcludeEachOtherAcrossTwoApplications() throws Exception {
        server.command("SET", "counter", "0");
        run(a -> run(b -> {
            List<Orders> orders = List.of(a.getBean(Orders.class), b.getBean(Orders.class));
            // a new array each call, equal content
            Concurrently.run(8, 10, thread -> orders.get(thread % 2).incrementCounterFor(new long[] {1, 2, 3}));
            assertThat(server.command("GET", "counter")).as("no update lost").isEqualTo("80");
            try {
                assertThat(a.getBean(Orders.class).incrementCounterFor(new long[] {1, 2, 3})).containsExactly("[1, 2, 3]");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }));
    }

    @Test
    void keyExpressionsReadArgumentsByNameByPositionByPropertyAndTheCall() {
        run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThat(orders.byName(42)).isPositive();
            assertThat(orders.byProperty(new Order(43, "ann"))).isPositive();
            assertThat(orders.byPosition("a", "b")).isPositive();
            assertThat(orders.byRoot()).isPositive();
            assertThat(orders.perMethod()).isPositive();
            assertThat(server.command("KEYS", "redis-lock:{*}")).as("all released").isEmpty();
        });
    }

    @Test
    void severalKeysAreAllHeldDuringTheCallAndNoneWhenOneIsTaken() {
        run(context -> {
            Orders orders = context.getBean(Orders.class);
            List<Long> tokens = orders.twoKeys("apples", "pears");
            assertThat(tokens).hasSize(2).allMatch(token -> token > 0);

            RedisLockTemplate other = otherClient(context);
            try (LockHandle pears = other.acquire("inventory:pears", LockOptions.tryOnce())) {
                assertThatThrownBy(() -> orders.twoKeys("apples", "pears")).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("inventory:pears");
                assertThat(server.command("EXISTS", "redis-lock:{inventory:apples}")).as("apples released again").isEqualTo("0");
            } finally {
                other.close();
            }
        });
    }

    @Test
    void classLevelAndMetaAnnotationsLock() {
        run(context -> {
            ClassLevel classLevel = context.getBean(ClassLevel.class);
            assertThat(classLevel.first()).isPositive();
            assertThat(classLevel.second()).isGreaterThan(0);
            assertThat(context.getBean(Orders.class).metaAnnotated(9)).isPositive();
            assertThat(context.getBean(Orders.class).aliased("bob")).as("key passed through @AliasFor")
                    .containsExactly("customer-lock:bob");
        });
    }

    @Test
    void waitTimesComeFromTheAnnotationOrAPropertyAndFailuresNameKeyAndWait() {
        run(context -> {
            Orders orders = context.getBean(Orders.class);
            RedisLockTemplate other = otherClient(context);
            try (LockHandle held = other.acquire("busy", LockOptions.tryOnce())) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> orders.throwing("busy")).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("'busy'").hasMessageMatching(".*within 2\\d\\dms.*");
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(190L, 1000L);
                start = System.nanoTime();
                assertThatThrownBy(() -> orders.waitFromProperty("busy")).isInstanceOf(LockNotAcquiredException.class);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(290L, 1000L);
            } finally {
                other.close();
            }
        });
    }

    @Test
    void aFixedLeaseIsNotRenewed() {
        run(context -> {
            RedisLockTemplate template = context.getBean(RedisLockTemplate.class);
            assertThat(context.getBean(Orders.class).fixedLease("leased", template)).isZero();
        });
    }

    @Test
    void skipReturnsAnEmptyValueByReturnTypeWithoutRunningTheMethod() {
        run(context -> {
            Orders orders = context.getBean(Orders.class);
            RedisLockTemplate other = otherClient(context);
            try (LockHandle held = other.acquire("skip", LockOptions.tryOnce())) {
                assertThat(orders.skipOptional("skip")).isEmpty();
                assertThat(orders.skipList("skip")).isEmpty();
                assertThat(orders.skipString("skip")).isNull();
                orders.skipVoid("skip");
                assertThat(server.command("EXISTS", "skip-void-ran")).isEqualTo("0");
            } finally {
                other.close();
            }
            assertThat(orders.skipOptional("skip")).contains("ran");
        });
    }

    @Test
    void theFencingTokenReachesTheMethodAsAParameterAndThroughLockContext() {
        run(context -> {
            Orders orders = context.getBean(Orders.class);
            long[] first = orders.fencing("fenced", 0);
            long[] second = orders.fencing("fenced", 0);
            assertThat(first[0]).isPositive().isEqualTo(first[1]);
            assertThat(second[0]).isGreaterThan(first[0]).isEqualTo(second[1]);
            assertThat(orders.nested("outer", orders)).isPositive();
            assertThat(LockContext.isActive()).isFalse();
        });
    }

    @Test
    void aKeyThatEvaluatesToNullIsRefusedNamingTheExpression() {
        run(context -> assertThatThrownBy(() -> context.getBean(Orders.class).nullableKey(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Orders.nullableKey(String)").hasMessageContaining("\"#id\"").hasMessageContaining("null"));
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void stoppingTheApplicationClosesTheSubscriptionBeforeTheRedisConnections(CapturedOutput output) {
        run(context -> {
            RedisLockTemplate other = otherClient(context);
            try (LockHandle held = other.acquire("shutdown", LockOptions.tryOnce())) {
                // waiting subscribes this client to its release notices
                assertThat(context.getBean(RedisLockTemplate.class).tryAcquire("shutdown",
                        LockOptions.waitFor(Duration.ofMillis(100)))).isEmpty();
            } finally {
                other.close();
            }
        });
        assertThat(output).doesNotContain("Unable to unsubscribe").doesNotContain("unreleased connections");
    }

    private static RedisLockTemplate otherClient(AssertableApplicationContext context) {
        return new RedisLockTemplate(context.getBean(StringRedisTemplate.class));
    }

}
