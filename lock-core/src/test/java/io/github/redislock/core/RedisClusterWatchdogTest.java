package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A frozen Cluster master costs only the locks in its own slots: with one lock per master, and with thousands of locks
 * on distinct keys, whose renewals to the frozen master must not hold up those to the healthy ones.
 */
@WithRedisCluster(freshForEachTest = true)
class RedisClusterWatchdogTest {

    private static final Duration LEASE = Duration.ofSeconds(1);
    /**
     * The lease of the 2,000 locks: with one second, Lettuce's pipelined renewals of a master's locks, sent while the
     * test takes the thousands on the same shared connection, were answered after their 250 ms and the leases ran out
     * on a loaded 2-core machine, with no fault at all (2 of about 10 runs)
     */
    private static final Duration MANY_LEASE = Duration.ofSeconds(2);

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

    /**
     * 2,000 locks on distinct keys, spread over the three masters, renewed every third of a two-second lease; one
     * master is frozen (SIGSTOP) for a lease and a half. Every lock on the other two must stay held, in this JVM and in
     * Redis, and every lock on the frozen one must be reported lost, to isHeld() and to the listener alike.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void aFrozenMasterCostsNoneOfTheThousandsOfLocksOnTheHealthyMasters(String driver) throws Exception {
        int count = 2_000;
        try (RedisClients clients = new RedisClients(cluster)) {
            StringRedisTemplate redis = driver.equals("jedis") ? clients.redisTemplate() : clients.lettuceRedisTemplate();
            RedisLockTemplate many = clients.lockTemplate(new RedisLockTemplate(redis,
                    RedisLockConfig.defaults().withWatchdogLease(MANY_LEASE)));
            Set<String> lost = ConcurrentHashMap.newKeySet();
            many.addLockLostListener((lock, reason) -> lost.add(lock.key()));
            warmUp(many, redis, MANY_LEASE, lost);
            Map<Integer, RedisServerProcess> masterOfSlot = cluster.masterOfSlot();
            RedisServerProcess frozen = cluster.masters().get(1);
            List<LockHandle> healthy = new ArrayList<>();
            List<LockHandle> onFrozen = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String key = "many:" + i;
                LockHandle handle = many.acquire(key, LockOptions.tryOnce());
                RedisServerProcess master = masterOfSlot.get(ClusterSlotHashUtil.calculateSlot(lockKey(key)));
                (master == frozen ? onFrozen : healthy).add(handle);
            }
            assertThat(lost).as("locks lost before the freeze").isEmpty();
            assertThat(healthy).as("locks on the healthy masters").hasSizeGreaterThan(count / 2);

            frozen.pause();
            try {
                Thread.sleep(MANY_LEASE.toMillis() * 3 / 2);
                assertHeld(healthy, lost, redis, many.clientId(), "while a master was frozen");
            } finally {
                frozen.resume();
            }
            Thread.sleep(MANY_LEASE.toMillis());
            assertHeld(healthy, lost, redis, many.clientId(), "a lease after the frozen master came back");
            List<String> frozenStillHeld = onFrozen.stream().filter(LockHandle::isHeld).map(LockHandle::key).toList();
            assertThat(frozenStillHeld).as("locks on the frozen master still held after a lease and a half").isEmpty();
            assertThat(lost).as("locks reported lost").containsExactlyInAnyOrderElementsOf(
                    onFrozen.stream().map(LockHandle::key).toList());
            for (LockHandle handle : healthy) {
                handle.release();
            }
        }
    }

    /**
     * A held lock's hash slot moves to another master (a resharding: CLUSTER SETSLOT and MIGRATE) while the watchdog
     * still sends that slot's renewals with the old master's: the call redirected (MOVED) is sent again alone, routed
     * by the driver, the moved lock is renewed on its new master, and every lock stays held for three leases after.
     * <p>
     * With a 1 s lease a renewal (sent a quarter to a third of a lease after the last) had to be answered within about
     * 650 ms, through the test's 300 acquisitions, GETs and releases on the same connections, on a loaded 2-core
     * machine, and the moved lock was the very first one taken, its lease counting while the new template connected,
     * loaded its scripts and looked up the Cluster's topology: a stall anywhere cost a lock with no fault in the
     * watchdog. So a lock is taken and renewed once first, the lease is {@link #MANY_LEASE}, and that the moved lock is
     * renewed after the move is asserted on its own (an unrenewed one would also be lost, and gone from Redis, within
     * the three leases).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void aLockWhoseSlotMovesToAnotherMasterStaysHeld(String driver) throws Exception {
        try (RedisClients clients = new RedisClients(cluster)) {
            StringRedisTemplate redis = driver.equals("jedis") ? clients.redisTemplate() : clients.lettuceRedisTemplate();
            Duration lease = MANY_LEASE;
            RedisLockTemplate many = clients.lockTemplate(new RedisLockTemplate(redis,
                    RedisLockConfig.defaults().withWatchdogLease(lease)));
            Set<String> lost = ConcurrentHashMap.newKeySet();
            many.addLockLostListener((lock, reason) -> lost.add(lock.key()));
            String moved = "moving:0";
            AtomicBoolean slotMoved = new AtomicBoolean();
            AtomicInteger renewedAfterMove = new AtomicInteger();
            many.addObserver(new LockObserver() {
                @Override
                public void renewal(LockEvent lock, RenewalOutcome outcome) {
                    if (slotMoved.get() && lock.key().equals(moved) && outcome == RenewalOutcome.RENEWED) {
                        renewedAfterMove.incrementAndGet();
                    }
                }
            });
            warmUp(many, redis, lease, lost);
            List<LockHandle> handles = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                handles.add(many.acquire("moving:" + i, LockOptions.tryOnce()));
            }
            Thread.sleep(lease.toMillis()); // renewed by master at least twice
            assertThat(lost).as("locks lost before the slot moved").isEmpty();
            int slot = ClusterSlotHashUtil.calculateSlot(lockKey(moved));
            RedisServerProcess from = cluster.masterOfSlot().get(slot);
            RedisServerProcess to = cluster.masters().stream().filter(m -> m != from).findFirst().orElseThrow();
            String fromId = from.command("CLUSTER", "MYID");
            String toId = to.command("CLUSTER", "MYID");
            to.command("CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", fromId);
            from.command("CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", toId);
            // every key of the slot moves: the lock, its fencing counter, and whatever else hashes there (a master
            // refuses to give up a slot it still holds keys of)
            for (String keys; !(keys = from.command("CLUSTER", "GETKEYSINSLOT", Integer.toString(slot), "1000")).isEmpty(); ) {
                List<String> migrate = new ArrayList<>(List.of("MIGRATE", to.host(), Integer.toString(to.port()), "", "0",
                        "5000", "KEYS"));
                migrate.addAll(List.of(keys.split("\n")));
                assertThat(from.command(migrate.toArray(String[]::new))).isIn("OK", "NOKEY");
            }
            for (RedisServerProcess master : cluster.masters()) {
                master.command("CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", toId);
            }

            slotMoved.set(true);

            Thread.sleep(3 * lease.toMillis());
            assertThat(lost).as("locks reported lost after a slot moved").isEmpty();
            assertThat(renewedAfterMove).as("renewals of '%s' since its slot moved, in three leases", moved)
                    .hasValueGreaterThanOrEqualTo(3);
            assertHeld(handles, lost, redis, many.clientId(), "after the slot of '" + moved + "' moved");
            assertThat(to.command("GET", lockKey(moved))).as("the moved lock, on its new master")
                    .startsWith(many.clientId());
            assertThat(to.command("PTTL", lockKey(moved))).as("its TTL there, renewed").isNotEqualTo("-2");
            for (LockHandle handle : handles) {
                handle.release();
            }
        }
    }

    private static void assertHeld(List<LockHandle> healthy, Set<String> lost, StringRedisTemplate redis, String clientId,
            String when) {
        List<String> notHeld = healthy.stream().filter(handle -> !handle.isHeld()).map(LockHandle::key).toList();
        List<String> reported = healthy.stream().map(LockHandle::key).filter(lost::contains).toList();
        List<String> goneFromRedis = healthy.stream().map(LockHandle::key).filter(key -> {
            String owner = redis.opsForValue().get(lockKey(key));
            return owner == null || !owner.startsWith(clientId);
        }).toList();
        assertThat(notHeld).as("of %,d locks on the healthy masters, those not held %s (%,d)", healthy.size(), when,
                notHeld.size()).isEmpty();
        assertThat(reported).as("of %,d locks on the healthy masters, those reported lost %s", healthy.size(), when)
                .isEmpty();
        assertThat(goneFromRedis).as("of %,d locks on the healthy masters, those Redis no longer has as ours %s (%,d)",
                healthy.size(), when, goneFromRedis.size()).isEmpty();
    }

    private static String lockKey(String key) {
        return "redis-lock:{" + key + "}";
    }


    private RedisServerProcess masterOf(String key) {
        return cluster.masterHolding(key);
    }

    /**
     * Takes one lock and holds it across its first renewal before a test's own: the first acquisition connects
     * (seconds with Lettuce on a loaded machine, and a lease counts from the request), and the watchdog's first
     * renewal asks which kind of Redis it renews on and the Cluster's topology, so that neither costs a lock of the
     * test's. Forgets what was reported lost meanwhile.
     */
    private static void warmUp(RedisLockTemplate many, StringRedisTemplate redis, Duration lease, Set<String> lost)
            throws InterruptedException {
        redis.hasKey("warm-up");
        try {
            many.acquire("warm-up", LockOptions.tryOnce()).release();
        } catch (LockLostException e) { // the first call took longer than a lease
        }
        LockHandle warmUp = many.acquire("warm-up", LockOptions.tryOnce());
        Thread.sleep(lease.toMillis() / 2);
        assertThat(warmUp.isHeld()).as("a lock held across its first renewal").isTrue();
        warmUp.release();
        lost.clear();
    }
}
