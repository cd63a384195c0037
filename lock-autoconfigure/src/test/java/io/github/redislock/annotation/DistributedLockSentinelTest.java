package io.github.redislock.annotation;

import java.util.List;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;

/** Every lock type through the annotation behind Redis Sentinel ({@code spring.data.redis.sentinel.*}). */
@WithRedisSentinel
class DistributedLockSentinelTest extends DistributedLockTopologyContract {

    static RedisSentinelProcesses sentinel;

    @Override
    List<String> redisProperties() {
        return List.of("spring.data.redis.sentinel.master=" + RedisSentinelProcesses.MASTER_NAME,
                "spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelNodes()));
    }
}
