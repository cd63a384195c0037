package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code redis-lock.replica-ack} is refused on Redis Cluster, with an error that says so and how to turn it off. */
@WithRedisCluster
@ExtendWith(RedisClientsExtension.class)
class ReplicaAckClusterTest {

    static RedisClusterProcesses cluster;
    RedisClients clients;

    @Test
    void anAcquisitionOnRedisClusterFailsNamingThePropertyToTurnOff() {
        RedisLockTemplate locks = clients.lockTemplate(RedisLockConfig.defaults().withReplicaAck(1, Duration.ofMillis(100)));
        assertThatThrownBy(() -> locks.acquire("ack:cluster", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("not with Redis Cluster")
                .hasMessageContaining("redis-lock.replica-ack.replicas=0");
    }
}
