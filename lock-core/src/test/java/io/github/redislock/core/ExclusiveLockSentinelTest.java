package io.github.redislock.core;

import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.extension.ExtendWith;

/** The exclusive-lock contract on a Sentinel deployment (a master, its replica and sentinels). */
@WithRedisSentinel
@ExtendWith(RedisClientsExtension.class)
class ExclusiveLockSentinelTest extends ExclusiveLockContract {

    static RedisClients clients;

    @Override
    LockOperations newClient(RedisLockConfig config) {
        return clients.lockTemplate(config);
    }

    @Override
    void removeLock(String key) {
        clients.redisTemplate().delete("redis-lock:{" + key + "}");
    }
}
