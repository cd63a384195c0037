package io.github.redislock.autoconfigure;

import io.github.redislock.autoconfigure.actuate.LocksEndpoint;
import io.github.redislock.autoconfigure.actuate.RedisLockHealthIndicator;
import io.github.redislock.autoconfigure.actuate.RedisLockActuatorAutoConfiguration;
import io.github.redislock.autoconfigure.metrics.RedisLockMetricsAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributors;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Two lock backends ({@code LockOperations} beans) in one application, against a real redis-server: the
 * {@code locks} endpoint, the metrics and the health report each under its bean name.
 */
@WithRedis
class LockBackendsObservabilityTest {

    static RedisServerProcess server;

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class, RedisLockMetricsAutoConfiguration.class,
                        RedisLockActuatorAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
                        "management.endpoints.web.exposure.include=locks")
                .withUserConfiguration(TwoBackends.class);
    }

    @Test
    void theLocksEndpointGroupsHeldLocksAndWaitersUnderEachBackendsBeanName() {
        runner().run(context -> whileAReportIsHeld(context, () -> {
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
            LocksEndpoint.LocksDescriptor all = endpoint.locks();
            assertThat(all.backends()).containsOnlyKeys("redisLockTemplate", "reportLocks");
            assertThat(all.backends().get("reportLocks").held()).singleElement().satisfies(held -> {
                assertThat(held.key()).isEqualTo("daily");
                assertThat(held.name()).isEqualTo("Jobs.report");
            });
            assertThat(all.backends().get("redisLockTemplate").held()).isEmpty();
            assertThat(all.backends().get("reportLocks").clientId())
                    .isEqualTo(context.getBean("reportLocks", RedisLockTemplate.class).clientId())
                    .isNotEqualTo(all.backends().get("redisLockTemplate").clientId());
            assertThat(endpoint.backend("reportLocks").held()).hasSize(1);
            assertThat(endpoint.backend("noSuchBean")).isNull();
            assertThat(server.command("EXISTS", "reports:{daily}")).as("taken on the named backend").isEqualTo("1");
        }));
    }

    @Test
    void everyMeterIsTaggedWithItsBackendsBeanName() {
        runner().run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            jobs.order();
            whileAReportIsHeld(context, () -> {
                assertThat(meters.get("redis.lock.active").tag("locks", "reportLocks").gauge().value()).isEqualTo(1);
                assertThat(meters.get("redis.lock.active").tag("locks", "redisLockTemplate").gauge().value()).isZero();
            });
            assertThat(meters.get("redis.lock.acquire").tag("locks", "reportLocks").tag("name", "Jobs.report")
                    .tag("outcome", "acquired").timer().count()).isEqualTo(1);
            assertThat(meters.get("redis.lock.acquire").tag("locks", "redisLockTemplate").tag("name", "Jobs.order")
                    .tag("outcome", "acquired").timer().count()).isEqualTo(1);
            assertThat(meters.find("redis.lock.acquire").tag("locks", "redisLockTemplate").tag("name", "Jobs.report").timer())
                    .isNull();
            assertThat(meters.get("redis.lock.held").tag("locks", "reportLocks").timer().count()).isEqualTo(1);
        });
    }

    @Test
    void theLockHealthHasAnEntryForEachBackend() {
        runner().run(context -> whileAReportIsHeld(context, () -> {
            assertThat(context.getBean("lockHealthIndicator")).isInstanceOf(CompositeHealthContributor.class);
            HealthContributors lock = context.getBean("lockHealthIndicator", CompositeHealthContributor.class);
            assertThat(lock.stream().map(HealthContributors.Entry::name)).containsExactlyInAnyOrder("redisLockTemplate",
                    "reportLocks");
            HealthIndicator reports = (HealthIndicator) lock.getContributor("reportLocks");
            assertThat(reports.health().getStatus()).isEqualTo(Status.UP);
            assertThat(reports.health().getDetails()).containsEntry("held", 1);
            assertThat(((HealthIndicator) lock.getContributor("redisLockTemplate")).health().getDetails())
                    .containsEntry("held", 0);
        }));
    }

    @Test
    void withOneBackendTheLockHealthIsThatBackendsIndicator() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class,
                        RedisLockActuatorAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=1")
                .run(context -> assertThat(context.getBean("lockHealthIndicator")).isInstanceOf(RedisLockHealthIndicator.class));
    }

    /** Runs {@code check} while {@code Jobs.report} holds its lock on the {@code reportLocks} backend. */
    private static void whileAReportIsHeld(AssertableApplicationContext context, Runnable check) throws Exception {
        Jobs jobs = context.getBean(Jobs.class);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Void> report = CompletableFuture.runAsync(() -> jobs.report(entered, leave));
        try {
            assertThat(entered.await(20, TimeUnit.SECONDS)).as("the report to start").isTrue();
            check.run();
        } finally {
            leave.countDown();
        }
        report.get(20, TimeUnit.SECONDS);
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoBackends {

        @Bean
        @Primary
        RedisLockTemplate redisLockTemplate(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis);
        }

        @Bean
        RedisLockTemplate reportLocks(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis, RedisLockConfig.defaults().withKeyPrefix("reports"));
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }

    static class Jobs {

        @DistributedLock(key = "'daily'", locks = "reportLocks")
        public void report(CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            try {
                leave.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @DistributedLock(key = "'order'")
        public void order() {
        }
    }
}
