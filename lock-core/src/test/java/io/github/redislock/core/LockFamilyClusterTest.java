package io.github.redislock.core;

import io.github.redislock.test.WithRedisCluster;

/** The fair, read/write and semaphore locks on a three-master Redis Cluster, each lock's keys in one slot. */
@WithRedisCluster
class LockFamilyClusterTest extends LockFamilyContract {
}
