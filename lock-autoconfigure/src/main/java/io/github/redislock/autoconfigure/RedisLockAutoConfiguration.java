package io.github.redislock.autoconfigure;

import io.github.redislock.annotation.DistributedLockAdvisor;
import io.github.redislock.annotation.DistributedLockValidator;
import io.github.redislock.core.RedisLockTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Distributed locks on the application's Redis: a {@link RedisLockTemplate} (bean {@code redisLockTemplate}), the
 * {@code @DistributedLock} advisor over every {@code LockOperations} bean, and the start-up check of every annotated
 * method with the backend it names.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnClass({StringRedisTemplate.class, RedisLockTemplate.class})
@ConditionalOnBooleanProperty(name = "redis-lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RedisLockProperties.class)
@ImportRuntimeHints(RedisLockRuntimeHints.class)
public final class RedisLockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RedisConnectionFactory.class)
    RedisLockTemplate redisLockTemplate(ObjectProvider<StringRedisTemplate> stringRedisTemplate,
            RedisConnectionFactory connectionFactory, RedisLockProperties properties, ApplicationEventPublisher events) {
        StringRedisTemplate redis = stringRedisTemplate.getIfUnique(() -> new StringRedisTemplate(connectionFactory));
        RedisLockTemplate template = new RedisLockTemplate(redis, properties.toConfig());
        template.addLockLostListener((lock, reason) -> events.publishEvent(new LockLostEvent(template, lock, reason)));
        return template;
    }

    @Bean
    @ConditionalOnBean(RedisLockTemplate.class)
    RedisLockTemplateLifecycle redisLockTemplateLifecycle(RedisLockTemplate template) {
        return new RedisLockTemplateLifecycle(template);
    }

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DistributedLockAdvisor distributedLockAdvisor(ConfigurableListableBeanFactory beanFactory,
            Environment environment) {
        // bound here rather than injected: the advisor is created early, before most beans
        RedisLockProperties settings = Binder.get(environment).bind("redis-lock", RedisLockProperties.class)
                .orElseGet(RedisLockProperties::new);
        return new DistributedLockAdvisor(beanFactory, new EmbeddedValueResolver(beanFactory),
                settings.isAllowBeanReferences(), settings.getAdvisorOrder());
    }

    @Bean
    @ConditionalOnMissingBean
    static DistributedLockValidator distributedLockValidator(ConfigurableListableBeanFactory beanFactory,
            DistributedLockAdvisor advisor) {
        return new DistributedLockValidator(beanFactory, advisor);
    }
}
