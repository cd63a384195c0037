package io.github.redislock.core;

import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.extension.ExtendWith;

/** The exclusive-lock contract on a Redis Cluster of three masters. */
@WithRedisCluster
@ExtendWith(RedisClientsExtension.class)
class ExclusiveLockClusterTest extends ExclusiveLockContract {

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
