package io.github.redislock.autoconfigure.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.shedlock.RedisLockTemplateLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** When the ShedLock provider is defined; no lock is taken, so no Redis is needed. */
class RedisLockShedLockAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class,
                    RedisLockShedLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=1");

    @Test
    void definesTheLockProviderOnTheTemplate() {
        runner.run(context -> assertThat(context).hasSingleBean(LockProvider.class)
                .getBean(LockProvider.class).isInstanceOf(RedisLockTemplateLockProvider.class));
    }

    @Test
    void backsOffWhenTheApplicationDefinesALockProvider() {
        runner.withUserConfiguration(OwnProvider.class).run(context -> assertThat(context)
                .hasSingleBean(LockProvider.class).hasBean("ownProvider"));
    }

    @Test
    void backsOffWithoutShedLock() {
        runner.withClassLoader(new FilteredClassLoader(LockProvider.class))
                .run(context -> assertThat(context).doesNotHaveBean(RedisLockTemplateLockProvider.class));
    }

    @Test
    void backsOffWithoutTheProviderModule() {
        runner.withClassLoader(new FilteredClassLoader(RedisLockTemplateLockProvider.class))
                .run(context -> assertThat(context).doesNotHaveBean(LockProvider.class));
    }

    @Test
    void backsOffWhenLocksAreDisabled() {
        runner.withPropertyValues("redis-lock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LockProvider.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnProvider {

        @Bean
        LockProvider ownProvider() {
            return configuration -> Optional.empty();
        }
    }
}
