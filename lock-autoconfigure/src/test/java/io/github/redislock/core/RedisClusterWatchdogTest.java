package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** A frozen Cluster master costs only the locks in its own slots. */
@WithRedisCluster(freshForEachTest = true)
class RedisClusterWatchdogTest {

    private static final Duration LEASE = Duration.ofSeconds(1);

    RedisClusterProcesses cluster;
    JedisConnectionFactory factory;
    RedisLockTemplate template;

    @BeforeEach
    void connect() {
        // the other masters keep serving their own slots while one is down
        cluster.masters().forEach(m -> m.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
        // a client timeout five times the lease: a RENEW to a frozen node blocks that long
        JedisClientConfiguration client = JedisClientConfiguration.builder()
                .connectTimeout(Duration.ofSeconds(5)).readTimeout(Duration.ofSeconds(5)).usePooling().build();
        factory = new JedisConnectionFactory(new RedisClusterConfiguration(cluster.nodes()), client);
        factory.afterPropertiesSet();
        factory.start();
        template = new RedisLockTemplate(new StringRedisTemplate(factory), RedisLockConfig.defaults().withWatchdogLease(LEASE));
    }

    @AfterEach
    void disconnect() {
        cluster.masters().forEach(RedisServerProcess::resume);
        template.close();
        factory.destroy();
    }

    @Test
    void aFrozenMasterCostsOnlyTheLocksInItsSlots() throws Exception {
        List<String> lost = new CopyOnWriteArrayList<>();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key()));
        Map<RedisServerProcess, LockHandle> oneLockPerMaster = new LinkedHashMap<>();
        for (int i = 0; oneLockPerMaster.size() < 3 && i < 100; i++) {
            LockHandle handle = template.acquire("order:" + i, LockOptions.tryOnce());
            RedisServerProcess master = masterOf("redis-lock:{order:" + i + "}");
            if (oneLockPerMaster.putIfAbsent(master, handle) != null) {
                handle.release();
            }
        }
        assertThat(oneLockPerMaster).hasSize(3);
        List<RedisServerProcess> masters = new ArrayList<>(oneLockPerMaster.keySet());
        RedisServerProcess frozen = masters.get(0);
        LockHandle frozenLock = oneLockPerMaster.get(frozen);

        frozen.pause();
        try {
            long end = System.nanoTime() + 4 * LEASE.toNanos();
            while (System.nanoTime() < end) {
                for (RedisServerProcess healthy : masters.subList(1, 3)) {
                    assertThat(oneLockPerMaster.get(healthy).isHeld()).as("a lock on a healthy master").isTrue();
                }
                Thread.sleep(20);
            }
            assertThat(frozenLock.isHeld()).as("the lock on the frozen master").isFalse();
            assertThat(lost).as("locks reported lost").containsExactly(frozenLock.key());
            for (RedisServerProcess healthy : masters.subList(1, 3)) {
                String lockKey = "redis-lock:{" + oneLockPerMaster.get(healthy).key() + "}";
                assertThat(healthy.command("GET", lockKey)).as("Redis still has it as ours").startsWith(template.clientId());
            }
        } finally {
            frozen.resume();
        }
        for (RedisServerProcess healthy : masters.subList(1, 3)) {
            oneLockPerMaster.get(healthy).release();
        }
        assertThatThrownBy(frozenLock::release).isInstanceOf(LockLostException.class);
    }

    private RedisServerProcess masterOf(String key) {
        return cluster.masterHolding(key);
    }
}
