package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.DistributedLockAdvisor;
import io.github.redislock.annotation.DistributedLockValidator;
import io.github.redislock.core.RedisLockTemplate;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The auto-configuration's beans and properties; no lock is taken, so no Redis is needed. */
class RedisLockAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=1");

    @Test
    void definesTheTemplateTheAdvisorAndTheValidatorWithDefaults() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RedisLockTemplate.class).hasSingleBean(DistributedLockAdvisor.class)
                    .hasSingleBean(DistributedLockValidator.class);
            RedisLockTemplate template = context.getBean(RedisLockTemplate.class);
            assertThat(template.config().keyPrefix()).isEqualTo("redis-lock");
            assertThat(template.config().defaultWaitTime()).isEqualTo(Duration.ofSeconds(10));
            assertThat(template.config().watchdogLease()).isEqualTo(Duration.ofSeconds(30));
        });
    }

    @Test
    void thePropertyDefaultsAreTheEngineDefaults() {
        RedisLockProperties properties = new RedisLockProperties();
        io.github.redislock.core.RedisLockConfig engine = io.github.redislock.core.RedisLockConfig.defaults();
        assertThat(properties.getKeyPrefix()).isEqualTo(engine.keyPrefix());
        assertThat(properties.getWaitTime()).isEqualTo(engine.defaultWaitTime());
        assertThat(properties.getLeaseTime()).isEqualTo(engine.watchdogLease());
        assertThat(properties.getReplicaAck().getReplicas()).isEqualTo(engine.replicaAck().replicas()).isZero();
        assertThat(properties.getReplicaAck().getTimeout()).isEqualTo(engine.replicaAck().timeout());
        assertThat(properties.getAsync().getMaxHolders()).isEqualTo(engine.asyncHolders().maxHolders()).isEqualTo(256);
        assertThat(properties.getAsync().getHolderWait()).isEqualTo(engine.asyncHolders().holderWait())
                .isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void asyncHoldersFollowProperties() {
        runner.withPropertyValues("redis-lock.async.max-holders=3", "redis-lock.async.holder-wait=250ms").run(context -> {
            io.github.redislock.core.RedisLockConfig.AsyncHolders holders = context.getBean(RedisLockTemplate.class).config()
                    .asyncHolders();
            assertThat(holders.maxHolders()).isEqualTo(3);
            assertThat(holders.holderWait()).isEqualTo(Duration.ofMillis(250));
        });
    }

    @Test
    void zeroMaxHoldersStopsTheApplicationNamingTheProperty() {
        runner.withPropertyValues("redis-lock.async.max-holders=0").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("redis-lock.async.max-holders must be at least 1"));
    }

    @Test
    void replicaAckFollowsProperties() {
        runner.withPropertyValues("redis-lock.replica-ack.replicas=2", "redis-lock.replica-ack.timeout=250ms").run(context -> {
            io.github.redislock.core.RedisLockConfig.ReplicaAck ack = context.getBean(RedisLockTemplate.class).config().replicaAck();
            assertThat(ack.replicas()).isEqualTo(2);
            assertThat(ack.timeout()).isEqualTo(Duration.ofMillis(250));
            assertThat(ack.enabled()).isTrue();
        });
    }

    @Test
    void aZeroReplicaAckTimeoutStopsTheApplicationNamingTheProperty() {
        runner.withPropertyValues("redis-lock.replica-ack.replicas=1", "redis-lock.replica-ack.timeout=0s").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("redis-lock.replica-ack.timeout").hasMessageContaining("forever"));
    }

    @Test
    void backsOffWhenUserDefinesTemplate() {
        runner.withUserConfiguration(UserTemplate.class).run(context -> {
            assertThat(context).hasSingleBean(RedisLockTemplate.class);
            assertThat(context.getBean(RedisLockTemplate.class).config().keyPrefix()).isEqualTo("mine");
        });
    }

    @Test
    void backsOffWhenUserDefinesAdvisor() {
        runner.withUserConfiguration(UserAdvisor.class).run(context -> {
            assertThat(context).hasSingleBean(DistributedLockAdvisor.class);
            assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(7);
        });
    }

    @Test
    void disabledByProperty() {
        runner.withPropertyValues("redis-lock.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(RedisLockTemplate.class).doesNotHaveBean(DistributedLockAdvisor.class)
                .doesNotHaveBean(DistributedLockValidator.class));
    }

    @Test
    void bindsEveryProperty() {
        runner.withPropertyValues("redis-lock.key-prefix=shop-locks", "redis-lock.wait-time=750ms",
                "redis-lock.lease-time=12s", "redis-lock.allow-bean-references=true").run(context -> {
                    RedisLockTemplate template = context.getBean(RedisLockTemplate.class);
                    assertThat(template.config().keyPrefix()).isEqualTo("shop-locks");
                    assertThat(template.config().defaultWaitTime()).isEqualTo(Duration.ofMillis(750));
                    assertThat(template.config().watchdogLease()).isEqualTo(Duration.ofSeconds(12));
                    assertThat(context.getBean(RedisLockProperties.class).isAllowBeanReferences()).isTrue();
                });
    }

    @Test
    void advisorOrderFollowsProperty() {
        runner.run(context -> assertThat(context.getBean(DistributedLockAdvisor.class).getOrder())
                .isEqualTo(org.springframework.core.Ordered.HIGHEST_PRECEDENCE + 1000));
        runner.withPropertyValues("redis-lock.advisor-order=42")
                .run(context -> assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42));
    }

    @Test
    void anInvalidPrefixStopsTheApplicationNamingIt() {
        runner.withPropertyValues("redis-lock.key-prefix=bad{prefix}").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("key prefix").hasMessageContaining("bad{prefix}"));
    }

    @Test
    void aBrokenAnnotationStopsTheApplicationNamingClassMethodAndExpression() {
        runner.withUserConfiguration(BrokenBeanConfiguration.class).run(context -> assertThat(context).getFailure()
                .hasMessageContaining(BrokenBean.class.getName() + ".pay(long)")
                .hasMessageContaining("'order:' + #id +"));
    }

    @Test
    void theIdeMetadataIsGeneratedForEveryProperty() throws Exception {
        try (InputStream in = RedisLockProperties.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"redis-lock.wait-time\"", "\"redis-lock.lease-time\"", "\"redis-lock.key-prefix\"",
                    "\"redis-lock.advisor-order\"", "\"redis-lock.enabled\"", "\"redis-lock.allow-bean-references\"",
                    "\"redis-lock.replica-ack.replicas\"", "\"redis-lock.replica-ack.timeout\"",
                    "\"redis-lock.async.max-holders\"", "\"redis-lock.async.holder-wait\"",
                    "Whether to enable distributed locks");
            assertThat(json).as("defaults shown in the IDE").contains("\"defaultValue\": \"redis-lock\"", "\"defaultValue\": \"10s\"",
                    "\"defaultValue\": \"30s\"", "\"defaultValue\": " + (org.springframework.core.Ordered.HIGHEST_PRECEDENCE + 1000));
        }
    }

    @Test
    void proxiesAnnotatedBeansWithoutAspectJOnTheClasspath() {
        runner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("org.aspectj")).withBean(LockedBean.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    LockedBean bean = context.getBean(LockedBean.class);
                    assertThat(AopUtils.isAopProxy(bean)).isTrue();
                    assertThat(((Advised) bean).getAdvisors()).anyMatch(DistributedLockAdvisor.class::isInstance);
                });
    }

    @Test
    void theTemplateIsClosedWithTheApplication() throws InterruptedException {
        long before = watchdogThreads();
        ConfigurableApplicationContext[] started = new ConfigurableApplicationContext[1];
        runner.run(context -> {
            context.getBean(RedisLockTemplate.class);
            assertThat(watchdogThreads()).isEqualTo(before + 1);
            started[0] = context;
        });
        assertThat(started[0].isActive()).isFalse();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (watchdogThreads() > before && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(watchdogThreads()).as("the template's watchdog stopped").isEqualTo(before);
    }

    private static long watchdogThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().equals("redis-lock-watchdog")).count();
    }

    public static class LockedBean {

        @DistributedLock(key = "'k'")
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserTemplate {

        @Bean
        RedisLockTemplate myLockTemplate(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis, io.github.redislock.core.RedisLockConfig.defaults().withKeyPrefix("mine"));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserAdvisor {

        @Bean
        static DistributedLockAdvisor myLockAdvisor(ConfigurableListableBeanFactory beanFactory) {
            return new DistributedLockAdvisor(beanFactory, null, false, 7);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BrokenBeanConfiguration {

        @Bean
        BrokenBean brokenBean() {
            return new BrokenBean();
        }
    }

    static class BrokenBean {

        @DistributedLock(key = "'order:' + #id +")
        public void pay(long id) {
        }
    }
}
