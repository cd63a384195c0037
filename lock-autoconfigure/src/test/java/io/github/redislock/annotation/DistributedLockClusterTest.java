package io.github.redislock.annotation;

import java.util.List;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.WithRedisCluster;

/** Every lock type through the annotation on a three-master Redis Cluster ({@code spring.data.redis.cluster.nodes}). */
@WithRedisCluster
class DistributedLockClusterTest extends DistributedLockTopologyContract {

    static RedisClusterProcesses cluster;

    @Override
    List<String> redisProperties() {
        return List.of("spring.data.redis.cluster.nodes=" + String.join(",", cluster.nodes()));
    }
}
