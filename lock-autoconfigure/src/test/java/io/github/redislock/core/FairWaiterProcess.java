package io.github.redislock.core;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A JVM that queues for a fair lock and holds it once its turn comes: {@code <host> <port> <key>}. Started by
 * {@link FairLockKilledWaitersTest} and killed with SIGKILL while it waits, as a crashed application would be.
 */
public final class FairWaiterProcess {

    private FairWaiterProcess() {
    }

    public static void main(String[] args) throws Exception {
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(args[0],
                Integer.parseInt(args[1])));
        factory.afterPropertiesSet();
        factory.start();
        RedisLockTemplate template = new RedisLockTemplate(new StringRedisTemplate(factory));
        System.out.println("waiting");
        template.acquireFair(args[2], LockOptions.waitFor(Duration.ofSeconds(60)));
        System.out.println("acquired");
        Thread.sleep(60_000);
    }
}
