package io.github.redislock.autoconfigure;

import java.util.List;

import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.RedlockTemplate;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Fallback;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ClassUtils;

/**
 * Redlock over the independent Redis masters of {@code redis-lock.redlock.nodes}: a {@link RedlockTemplate} bean
 * named {@code redlockTemplate}, next to (not instead of) the application's {@link RedisLockTemplate}, used by the
 * methods that name it, {@code @DistributedLock(locks = "redlockTemplate")}. It is a {@link Fallback} bean: where one
 * lock backend is wanted by type (a method without {@code locks}, an injected {@code LockOperations}), the
 * application's template is taken. Its node clients use the application's Redis driver: the one of its
 * {@link RedisConnectionFactory}, else {@code spring.data.redis.client-type}, else Lettuce when present, as Spring Boot
 * picks.
 */
@AutoConfiguration(after = {DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class})
@ConditionalOnClass({StringRedisTemplate.class, RedlockTemplate.class})
@ConditionalOnBooleanProperty(name = "redis-lock.enabled", matchIfMissing = true)
@Conditional(RedlockAutoConfiguration.OnRedlockNodes.class)
@EnableConfigurationProperties({RedisLockProperties.class, RedlockProperties.class})
public final class RedlockAutoConfiguration {

    static final String LETTUCE = "io.lettuce.core.RedisClient";
    static final String JEDIS = "redis.clients.jedis.Jedis";

    @Bean
    @ConditionalOnMissingBean
    RedlockConnections redlockConnections(RedlockProperties redlock, ObjectProvider<RedisConnectionFactory> appFactory,
            Environment environment) {
        return new RedlockConnections(redlock.getNodes(), redlock.getTimeout(),
                driver(appFactory.getIfUnique(), environment.getProperty("spring.data.redis.client-type")));
    }

    @Bean
    @Fallback
    @ConditionalOnMissingBean
    RedlockTemplate redlockTemplate(RedlockConnections connections, RedlockProperties redlock, RedisLockProperties properties,
            ApplicationEventPublisher events) {
        if (connections.templates().size() < 3 || connections.templates().size() % 2 == 0) {
            throw new IllegalStateException("redis-lock.redlock.nodes lists " + connections.templates().size() + " node(s) "
                    + connections.templates().keySet() + ", but Redlock needs an odd number of independent masters, at "
                    + "least 3: a majority of an even number tolerates no more failures than one node fewer");
        }
        RedisLockConfig config = properties.toConfig();
        RedlockTemplate template = new RedlockTemplate(connections.templates(), config, redlock.getTimeout(),
                redlock.getRestartDelay() != null ? redlock.getRestartDelay() : config.watchdogLease());
        template.addLockLostListener((lock, reason) -> events.publishEvent(new LockLostEvent(template, lock, reason)));
        return template;
    }

    /** The application's driver: its connection factory's, else the configured client type, else Lettuce first. */
    static RedlockConnections.Driver driver(@Nullable RedisConnectionFactory appFactory, @Nullable String clientType) {
        ClassLoader loader = RedlockAutoConfiguration.class.getClassLoader();
        if (appFactory != null && appFactory.getClass().getName().contains(".jedis.")) {
            return RedlockConnections.Driver.JEDIS;
        }
        if (appFactory != null && appFactory.getClass().getName().contains(".lettuce.")) {
            return RedlockConnections.Driver.LETTUCE;
        }
        if ("jedis".equalsIgnoreCase(clientType) && ClassUtils.isPresent(JEDIS, loader)) {
            return RedlockConnections.Driver.JEDIS;
        }
        if (ClassUtils.isPresent(LETTUCE, loader)) {
            return RedlockConnections.Driver.LETTUCE;
        }
        if (ClassUtils.isPresent(JEDIS, loader)) {
            return RedlockConnections.Driver.JEDIS;
        }
        throw new IllegalStateException("redis-lock.redlock.nodes is set, but neither Lettuce nor Jedis is on the classpath: "
                + "add spring-boot-starter-data-redis");
    }

    /** Matches when {@code redis-lock.redlock.nodes} lists at least one node. */
    static final class OnRedlockNodes extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            List<String> nodes = Binder.get(context.getEnvironment())
                    .bind("redis-lock.redlock.nodes", Bindable.listOf(String.class)).orElse(List.of());
            return nodes.isEmpty() ? ConditionOutcome.noMatch("redis-lock.redlock.nodes is not set")
                    : ConditionOutcome.match("redis-lock.redlock.nodes lists " + nodes.size() + " node(s)");
        }
    }
}
