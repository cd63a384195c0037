package io.github.redislock.autoconfigure.actuate;

import java.util.Map;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.autoconfigure.RedlockAutoConfiguration;
import io.github.redislock.core.LockOperations;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.CompositeHealthContributorConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Actuator side of the locks of every lock backend ({@link LockOperations} bean), when Actuator is present: the
 * {@code locks} endpoint ({@link LocksEndpoint}, each backend under its bean name, exposed like Boot's own endpoints,
 * through {@code management.endpoints.web.exposure.include}) and the {@code lock} health contributor
 * ({@link RedisLockHealthIndicator}; with several backends, one per bean name under {@code lock};
 * {@code management.health.lock.enabled}).
 */
@AutoConfiguration(after = {RedisLockAutoConfiguration.class, RedlockAutoConfiguration.class})
@ConditionalOnClass(LockOperations.class)
@ConditionalOnBean(LockOperations.class)
public final class RedisLockActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
    static final class LocksEndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint(LocksEndpoint.class)
        LocksEndpoint locksEndpoint(Map<String, LockOperations> backends) {
            return new LocksEndpoint(backends);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
    @ConditionalOnEnabledHealthIndicator("lock")
    static final class LockHealthConfiguration
            extends CompositeHealthContributorConfiguration<RedisLockHealthIndicator, LockOperations> {

        LockHealthConfiguration() {
            super(RedisLockHealthIndicator::new);
        }

        @Bean
        @ConditionalOnMissingBean(name = {"lockHealthIndicator", "lockHealthContributor"})
        HealthContributor lockHealthIndicator(ConfigurableListableBeanFactory beanFactory) {
            return createContributor(beanFactory, LockOperations.class);
        }
    }
}
