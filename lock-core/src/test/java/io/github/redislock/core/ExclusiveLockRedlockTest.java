package io.github.redislock.core;

import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterAll;

/** The exclusive-lock contract on Redlock over five independent masters. */
@WithRedisNodes(5)
class ExclusiveLockRedlockTest extends ExclusiveLockContract {

    static RedisNodes nodes;
    static RedlockClients clients;

    @Override
    LockOperations newClient(RedisLockConfig config) {
        if (clients == null) {
            clients = new RedlockClients(nodes);
        }
        return clients.template(config);
    }

    @Override
    void removeLock(String key) {
        for (RedisServerProcess node : nodes.nodes()) {
            node.command("DEL", "redis-lock:{" + key + "}");
        }
    }

    @AfterAll
    static void closeClients() {
        if (clients != null) {
            clients.close();
            clients = null;
        }
    }
}
