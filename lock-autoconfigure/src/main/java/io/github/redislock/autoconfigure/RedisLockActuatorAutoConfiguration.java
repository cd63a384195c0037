package io.github.redislock.autoconfigure;

import io.github.redislock.core.RedisLockTemplate;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Actuator side of the locks, when Actuator is present: the {@code locks} endpoint ({@link LocksEndpoint},
 * exposed like Boot's own endpoints, through {@code management.endpoints.web.exposure.include}) and the {@code lock}
 * health contributor ({@link RedisLockHealthIndicator}, {@code management.health.lock.enabled}).
 */
@AutoConfiguration(after = RedisLockAutoConfiguration.class)
@ConditionalOnClass(RedisLockTemplate.class)
@ConditionalOnBean(RedisLockTemplate.class)
public final class RedisLockActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
    static final class LocksEndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint(LocksEndpoint.class)
        LocksEndpoint locksEndpoint(RedisLockTemplate template) {
            return new LocksEndpoint(template);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
    @ConditionalOnEnabledHealthIndicator("lock")
    static final class LockHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "lockHealthIndicator")
        RedisLockHealthIndicator lockHealthIndicator(RedisLockTemplate template) {
            return new RedisLockHealthIndicator(template);
        }
    }
}
