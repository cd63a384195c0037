package io.github.redislock.autoconfigure.shedlock;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.shedlock.RedisLockTemplateLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * ShedLock's {@code @SchedulerLock} on the lock engine: a {@link RedisLockTemplateLockProvider} over the
 * application's {@link RedisLockTemplate}, when {@code redis-lock-shedlock} is on the class path and the application
 * declares no {@link LockProvider} of its own (declaring one, ShedLock's or this one with another key prefix, backs
 * this off).
 */
@AutoConfiguration(after = RedisLockAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, RedisLockTemplateLockProvider.class})
public final class RedisLockShedLockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    @ConditionalOnSingleCandidate(RedisLockTemplate.class)
    RedisLockTemplateLockProvider redisLockShedLockProvider(RedisLockTemplate template) {
        return new RedisLockTemplateLockProvider(template);
    }
}
