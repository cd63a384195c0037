package io.github.redislock.core;

import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.extension.ExtendWith;

/** The exclusive-lock contract on one Redis server. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class ExclusiveLockSingleRedisTest extends ExclusiveLockContract {

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
