package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.RedisAclTest.Driver;
import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisAcl;
import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The documented ACL user on a three-master Redis Cluster, with the cluster commands docs/security.md adds for it, with
 * Jedis and with Lettuce: locks on every master are taken, waited for (the waiter woken by the release notice) and
 * released, and no master denied a command, key or channel.
 */
@WithRedisCluster
class RedisClusterAclTest {

    static RedisClusterProcesses cluster;

    private final List<RedisClients> clients = new ArrayList<>();
    @PerTest
    ExecutorService pool;

    @BeforeEach
    void createTheUserOnEveryMaster() {
        String line = RedisAcl.documentedSetUser("../docs/security.md", "redis-lock-cluster", RedisAclTest.PASSWORD);
        for (RedisServerProcess master : cluster.masters()) {
            RedisAcl.setUser(master, line);
            master.command("ACL", "LOG", "RESET");
        }
    }

    @AfterEach
    void closeClients() {
        clients.forEach(RedisClients::close);
    }

    private RedisLockTemplate locks(Driver driver) {
        RedisClients as = new RedisClients(cluster, "redis-lock-cluster", RedisAclTest.PASSWORD);
        clients.add(as);
        StringRedisTemplate redis = driver == Driver.JEDIS ? as.redisTemplate() : as.lettuceRedisTemplate();
        return as.lockTemplate(redis);
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void theDocumentedClusterUserTakesWaitsForAndReleasesLocksOnEveryMaster(Driver driver) throws Exception {
        RedisLockTemplate holder = locks(driver);
        RedisLockTemplate waiter = locks(driver);
        for (int i = 0; i < 6; i++) {
            String key = "acl-cluster-" + driver + "-" + i;
            LockHandle held = holder.acquire(key, LockOptions.tryOnce());
            Future<Long> waiting = pool.submit(() -> {
                try (LockHandle handle = waiter.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    return handle.fencingToken();
                }
            });
            RedisServerProcess master = cluster.masterHolding("redis-lock:{" + key + "}");
            Await.until(() -> "1".equals(master.command("ZCARD", "redis-lock:{" + key + "}:waiters")), Duration.ofSeconds(10),
                    "the waiter registered");
            held.release();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
        }
        closeClients();
        List<String> denied = new ArrayList<>();
        cluster.masters().forEach(master -> denied.addAll(RedisAcl.deniedLog(master)));
        assertThat(denied).as("commands, keys and channels the masters denied").isEmpty();
    }
}
