package io.github.redislock.autoconfigure.integration;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.autoconfigure.RedlockAutoConfiguration;
import io.github.redislock.core.LockOperations;
import io.github.redislock.integration.RedisLockOperationsRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Integration's {@link LockRegistry} on the lock engine: a {@link RedisLockOperationsRegistry} over the
 * application's {@link LockOperations} (the {@code RedisLockTemplate}, or the primary one when there are several),
 * when {@code redis-lock-spring-integration} and Spring Integration are on the class path and the application declares
 * no {@code LockRegistry} of its own. Its lock keys are the engine's keys as given, shared with
 * {@code @DistributedLock}; declare a {@code RedisLockOperationsRegistry} with a registry key to keep them apart.
 */
@AutoConfiguration(after = {RedisLockAutoConfiguration.class, RedlockAutoConfiguration.class})
@ConditionalOnClass({LockRegistry.class, RedisLockOperationsRegistry.class})
public final class RedisLockIntegrationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    @ConditionalOnSingleCandidate(LockOperations.class)
    RedisLockOperationsRegistry redisLockOperationsRegistry(LockOperations locks) {
        return new RedisLockOperationsRegistry(locks);
    }
}
