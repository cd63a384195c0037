package io.github.redislock.autoconfigure.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.locks.Lock;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.integration.RedisLockOperationsRegistry;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** When the Spring Integration lock registry is defined, and that it locks on the application's Redis. */
@WithRedis
class RedisLockIntegrationAutoConfigurationTest {

    static RedisServerProcess server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class,
                    RedisLockIntegrationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=1");

    @Test
    void definesTheLockRegistryOnTheLockTemplate() {
        runner.run(context -> assertThat(context).hasSingleBean(LockRegistry.class)
                .getBean(LockRegistry.class).isInstanceOf(RedisLockOperationsRegistry.class));
    }

    @Test
    void itsLocksAreTheTemplatesLocksOfTheSameKey() {
        runner.withPropertyValues("spring.data.redis.port=" + server.port()).run(context -> {
            RedisLockOperationsRegistry registry = context.getBean(RedisLockOperationsRegistry.class);
            Lock lock = registry.obtain("auto-configured");
            lock.lock();
            try {
                assertThat(registry.fencingToken("auto-configured")).isPresent();
                assertThat(context.getBean(RedisLockTemplate.class).diagnostics().heldLocks())
                        .anySatisfy(held -> {
                            assertThat(held.key()).isEqualTo("auto-configured");
                            assertThat(held.name()).isEqualTo(RedisLockOperationsRegistry.METRIC_NAME);
                        });
            } finally {
                lock.unlock();
            }
        });
    }

    @Test
    void backsOffWhenTheApplicationDefinesALockRegistry() {
        runner.withUserConfiguration(OwnRegistry.class).run(context -> assertThat(context)
                .hasSingleBean(LockRegistry.class).hasBean("ownRegistry"));
    }

    @Test
    void aRedisLockRegistryUserSwitchesWithOneBean() {
        runner.withUserConfiguration(SwitchedFromRedisLockRegistry.class).run(context -> {
            assertThat(context).hasSingleBean(LockRegistry.class).hasBean("redisLockRegistry");
            assertThat(context.getBean(ExpirableLockRegistry.class)).hasToString("RedisLockOperationsRegistry[my-app]");
        });
    }

    @Test
    void backsOffWithoutSpringIntegration() {
        runner.withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .run(context -> assertThat(context).doesNotHaveBean(RedisLockOperationsRegistry.class));
    }

    @Test
    void backsOffWithoutTheRegistryModule() {
        runner.withClassLoader(new FilteredClassLoader(RedisLockOperationsRegistry.class))
                .run(context -> assertThat(context).doesNotHaveBean(LockRegistry.class));
    }

    @Test
    void backsOffWhenLocksAreDisabled() {
        runner.withPropertyValues("redis-lock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LockRegistry.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRegistry {

        @Bean
        LockRegistry<?> ownRegistry() {
            return new DefaultLockRegistry();
        }
    }

    /** What was {@code new RedisLockRegistry(connectionFactory, "my-app")}. */
    @Configuration(proxyBeanMethods = false)
    static class SwitchedFromRedisLockRegistry {

        @Bean
        RedisLockOperationsRegistry redisLockRegistry(LockOperations locks) {
            return new RedisLockOperationsRegistry(locks, "my-app");
        }
    }
}
