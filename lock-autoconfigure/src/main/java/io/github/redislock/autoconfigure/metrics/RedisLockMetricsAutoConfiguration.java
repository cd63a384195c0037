package io.github.redislock.autoconfigure.metrics;

import java.util.Map;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.autoconfigure.RedlockAutoConfiguration;
import io.github.redislock.core.LockOperations;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Micrometer metrics ({@link RedisLockMetrics}) and observations ({@link RedisLockObservations}) of the locks of every
 * lock backend ({@code LockOperations} bean), each tagged with its bean name, when
 * Micrometer is on the classpath and the application has a {@code MeterRegistry} / {@code ObservationRegistry}
 * (Spring Boot's Actuator provides both).
 */
@AutoConfiguration(after = {RedisLockAutoConfiguration.class, RedlockAutoConfiguration.class}, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass({LockOperations.class, ObservationRegistry.class})
public final class RedisLockMetricsAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean({LockOperations.class, MeterRegistry.class})
    @ConditionalOnBooleanProperty(name = "redis-lock.metrics.enabled", matchIfMissing = true)
    static final class Metrics {

        @Bean
        @ConditionalOnMissingBean
        RedisLockMetrics redisLockMetrics(Map<String, LockOperations> backends, MeterRegistry registry) {
            return new RedisLockMetrics(registry, backends);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean({LockOperations.class, ObservationRegistry.class})
    @ConditionalOnBooleanProperty(name = "redis-lock.observations.enabled", matchIfMissing = true)
    static final class Observations {

        @Bean
        @ConditionalOnMissingBean
        RedisLockObservations redisLockObservations(Map<String, LockOperations> backends, ObservationRegistry registry) {
            return new RedisLockObservations(registry, backends);
        }
    }
}
