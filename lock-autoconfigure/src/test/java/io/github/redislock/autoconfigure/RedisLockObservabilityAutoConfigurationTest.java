package io.github.redislock.autoconfigure;

import io.github.redislock.autoconfigure.actuate.LocksEndpoint;
import io.github.redislock.autoconfigure.actuate.RedisLockActuatorAutoConfiguration;
import io.github.redislock.autoconfigure.metrics.RedisLockMetrics;
import io.github.redislock.autoconfigure.metrics.RedisLockMetricsAutoConfiguration;
import io.github.redislock.autoconfigure.metrics.RedisLockObservations;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Which metrics, observation, endpoint and health beans the auto-configuration defines; no lock is taken. */
class RedisLockObservabilityAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class,
                    RedisLockMetricsAutoConfiguration.class, RedisLockActuatorAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=1");

    @Test
    void bindsMetricsAndObservationsWhenTheApplicationHasTheirRegistries() {
        runner.withUserConfiguration(Registries.class).run(context -> {
            assertThat(context).hasSingleBean(RedisLockMetrics.class).hasSingleBean(RedisLockObservations.class);
            assertThat(context.getBean(MeterRegistry.class).find("redis.lock.active").gauge()).isNotNull();
        });
    }

    @Test
    void metricsDisabledByProperty() {
        runner.withUserConfiguration(Registries.class).withPropertyValues("redis-lock.metrics.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RedisLockMetrics.class).hasSingleBean(RedisLockObservations.class));
    }

    @Test
    void observationsDisabledByProperty() {
        runner.withUserConfiguration(Registries.class).withPropertyValues("redis-lock.observations.enabled=false")
                .run(context -> assertThat(context).hasSingleBean(RedisLockMetrics.class).doesNotHaveBean(RedisLockObservations.class));
    }

    @Test
    void noMetricsWithoutARegistry() {
        runner.run(context -> assertThat(context).doesNotHaveBean(RedisLockMetrics.class).doesNotHaveBean(RedisLockObservations.class));
    }

    @Test
    void noMetricsWithoutMicrometerOnTheClasspath() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RedisLockMetrics.class)
                        .doesNotHaveBean(RedisLockObservations.class));
    }

    @Test
    void theLocksEndpointExistsOnlyWhenExposed() {
        runner.run(context -> assertThat(context).doesNotHaveBean(LocksEndpoint.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=locks")
                .run(context -> assertThat(context).hasSingleBean(LocksEndpoint.class));
    }

    @Test
    void theLockHealthIndicatorIsOnByDefaultAndOffByProperty() {
        runner.run(context -> assertThat(context).hasBean("lockHealthIndicator"));
        runner.withPropertyValues("management.health.lock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("lockHealthIndicator"));
    }

    @Test
    void noEndpointOrHealthWithoutActuatorOnTheClasspath() {
        runner.withClassLoader(new FilteredClassLoader(Endpoint.class, HealthIndicator.class))
                .withPropertyValues("management.endpoints.web.exposure.include=locks")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LocksEndpoint.class)
                        .doesNotHaveBean("lockHealthIndicator"));
    }

    @Test
    void theIdeMetadataDescribesTheMetricsAndObservationsSwitches() throws Exception {
        try (java.io.InputStream in = RedisLockProperties.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            String json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(json).contains("\"redis-lock.metrics.enabled\"", "\"redis-lock.observations.enabled\"",
                    "Whether to record Micrometer metrics of the locks", "Whether to observe each wait for a lock");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Registries {

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        ObservationRegistry observationRegistry() {
            return ObservationRegistry.create();
        }
    }
}
