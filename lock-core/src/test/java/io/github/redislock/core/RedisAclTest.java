package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisAcl;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The locks as a Redis ACL user: the user docs/security.md documents (its {@code ACL SETUSER} line, read from the page)
 * takes, waits for, renews, acknowledges and releases locks with Jedis and with Lettuce without one command, key or
 * channel denied ({@code ACL LOG} stays empty); a user missing a permission is told which, promptly, never left waiting.
 * The fair, read/write and semaphore locks under the same user: {@link LockFamilyAclTest}.
 */
@WithRedis
class RedisAclTest {

    static final String PASSWORD = "lock-test-password";

    static RedisServerProcess server;
    /** A replica of {@link #server}, for the replica acknowledgement's WAIT. */
    static RedisServerProcess replica;

    private final List<RedisClients> clients = new ArrayList<>();
    @PerTest
    ExecutorService pool;

    enum Driver {
        JEDIS, LETTUCE
    }

    @BeforeAll
    static void startReplica() throws InterruptedException {
        replica = RedisServerProcess.start(List.of("--replicaof", server.host(), Integer.toString(server.port())));
        Await.until(() -> replica.command("INFO", "replication").contains("master_link_status:up"), Duration.ofSeconds(20),
                "the replica in sync");
    }

    @AfterAll
    static void stopReplica() {
        replica.close();
    }

    @BeforeEach
    void resetTheDeniedLog() {
        server.command("ACL", "LOG", "RESET");
    }

    @AfterEach
    void closeClients() {
        clients.forEach(RedisClients::close);
    }

    /** A lock client logged in as {@code user}, with {@code config}. */
    private RedisLockTemplate locks(Driver driver, String user, RedisLockConfig config) {
        RedisClients as = new RedisClients(server, user, PASSWORD);
        clients.add(as);
        StringRedisTemplate redis = driver == Driver.JEDIS ? as.redisTemplate() : as.lettuceRedisTemplate();
        return as.lockTemplate(new RedisLockTemplate(redis, config));
    }

    private RedisLockTemplate documentedUser(Driver driver, RedisLockConfig config) {
        RedisAcl.setUser(server, RedisAcl.documentedSetUser("../docs/security.md", "redis-lock", PASSWORD));
        return locks(driver, "redis-lock", config);
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void theDocumentedUserTakesWaitsForRenewsAndReleasesAnExclusiveLock(Driver driver) throws Exception {
        Duration lease = Duration.ofMillis(1200); // generous: a loaded 2-core machine can delay a renewal by hundreds of ms
        RedisLockTemplate holder = documentedUser(driver, RedisLockConfig.defaults().withWatchdogLease(lease));
        RedisLockTemplate waiter = documentedUser(driver, RedisLockConfig.defaults());
        LockHandle held = holder.acquire("acl-exclusive", LockOptions.tryOnce());
        Future<long[]> waiting = pool.submit(() -> {
            try (LockHandle handle = waiter.acquire("acl-exclusive", LockOptions.waitFor(Duration.ofSeconds(30)))) {
                return new long[] {System.nanoTime(), handle.fencingToken()};
            }
        });
        Await.until(() -> "1".equals(server.command("ZCARD", "redis-lock:{acl-exclusive}:waiters")), Duration.ofSeconds(10),
                "the waiter registered");
        Thread.sleep(lease.multipliedBy(3).toMillis()); // renewed by the watchdog, or it would have expired
        assertThat(held.isHeld()).as("held past three leases").isTrue();
        assertThat(Long.parseLong(server.command("PTTL", "redis-lock:{acl-exclusive}"))).as("the lock's TTL").isPositive();
        assertThat(waiting.isDone()).as("the waiter still waits").isFalse();
        long releasedAt = System.nanoTime();
        held.release();
        long[] acquired = waiting.get(10, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquired[0] - releasedAt)).as("woken by the release notice, ms")
                .isLessThan(2000);
        assertThat(acquired[1]).isGreaterThan(held.fencingToken());
        assertThat(server.command("EXISTS", "redis-lock:{acl-exclusive}")).as("released").isEqualTo("0");
        assertThat(RedisAcl.deniedLog(server)).as("commands, keys and channels Redis denied").isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void theDocumentedUserMayWaitForTheReplicaToAcknowledge(Driver driver) {
        RedisLockTemplate locks = documentedUser(driver, RedisLockConfig.defaults().withReplicaAck(1, Duration.ofSeconds(2)));
        try (LockHandle handle = locks.acquire("acl-ack", LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
            assertThat(replica.command("GET", "redis-lock:{acl-ack}")).as("on the replica already").isNotNull();
        }
        try (LockHandle fair = locks.fairLock("acl-ack-fair").acquire(LockOptions.tryOnce());
                PermitHandle permit = locks.semaphore("acl-ack-semaphore", 2).acquire(LockOptions.tryOnce())) {
            assertThat(fair.isHeld()).isTrue();
            assertThat(permit.isHeld()).isTrue();
        }
        assertThat(RedisAcl.deniedLog(server)).as("commands, keys and channels Redis denied").isEmpty();
    }

    /** The lock types, each acquired once by the code under test. */
    enum Type {
        EXCLUSIVE, FAIR, READ_WRITE, SEMAPHORE;

        AutoCloseable acquire(RedisLockTemplate locks, String key, LockOptions options) {
            return switch (this) {
                case EXCLUSIVE -> locks.acquire(key, options);
                case FAIR -> locks.fairLock(key).acquire(options);
                case READ_WRITE -> locks.acquireAll(List.of(key), options, LockType.WRITE);
                case SEMAPHORE -> locks.semaphore(key, 1).acquire(options);
            };
        }
    }

    static Stream<Arguments> typesAndDrivers() {
        return Stream.of(Type.values()).flatMap(type -> Stream.of(Driver.values()).map(driver -> Arguments.of(type, driver)));
    }

    /** A user with the documented rules but {@code missing}. */
    private RedisLockTemplate userWithout(Driver driver, String... missing) {
        String documented = RedisAcl.documentedSetUser("../docs/security.md", "redis-lock", PASSWORD);
        RedisAcl.setUser(server, RedisAcl.without(documented, missing).replace("SETUSER redis-lock ", "SETUSER lacking "));
        return locks(driver, "lacking", RedisLockConfig.defaults());
    }

    /** Acquires {@code key} with a wait time far beyond the bound, and returns what it threw within the bound. */
    private static LockNotAcquiredException deniedPromptly(Type type, RedisLockTemplate locks, String key) {
        long start = System.nanoTime();
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                () -> type.acquire(locks, key, LockOptions.waitFor(WAIT)).close());
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(thrown).as("what the acquisition threw").isInstanceOf(LockNotAcquiredException.class);
        assertThat(tookMs).as("ms until a denied acquisition gives up, of its %s s wait time", WAIT.toSeconds())
                .isLessThan(PROMPTLY.toMillis());
        assertThat(thrown.getMessage()).as("the error").contains("'" + key + "'").contains("docs/security.md");
        return (LockNotAcquiredException) thrown;
    }

    /** Long enough that waiting it out fails the test; generous for a loaded machine otherwise. */
    static final Duration WAIT = Duration.ofSeconds(15);
    static final Duration PROMPTLY = Duration.ofSeconds(5);

    @ParameterizedTest
    @MethodSource("typesAndDrivers")
    void aUserWhoMayNotRunTheScriptsIsToldSoAtOnceNamingTheCommand(Type type, Driver driver) {
        RedisLockTemplate locks = userWithout(driver, "+evalsha");
        assertThat(deniedPromptly(type, locks, "acl-no-evalsha").getMessage()).contains("NOPERM").contains("'evalsha'");
    }

    @ParameterizedTest
    @MethodSource("typesAndDrivers")
    void aUserWhoMayNotTouchTheLockKeysIsToldSoAtOnceNamingTheKeys(Type type, Driver driver) {
        RedisLockTemplate locks = userWithout(driver, "~redis-lock:*");
        assertThat(deniedPromptly(type, locks, "acl-no-keys").getMessage()).contains("NOPERM").contains("keys")
                .contains("redis-lock:{acl-no-keys}");
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aUserWhoMayNotRunACommandOfTheScriptsIsToldSoAtOnce(Driver driver) {
        RedisLockTemplate locks = userWithout(driver, "+time");
        assertThat(deniedPromptly(Type.EXCLUSIVE, locks, "acl-no-time").getMessage())
                .contains("can't run this command").contains("redis-lock:{acl-no-time}");
    }

    @ParameterizedTest
    @MethodSource("typesAndDrivers")
    void aWaiterWhoseUserMayNotSubscribeIsToldSoInsteadOfWaitingOutItsWaitTime(Type type, Driver driver) throws Exception {
        RedisClients admin = new RedisClients(server);
        clients.add(admin);
        String key = "acl-no-channel-" + type + "-" + driver;
        try (AutoCloseable held = type.acquire(admin.lockTemplate(), key, LockOptions.tryOnce())) {
            RedisLockTemplate locks = userWithout(driver, "&redis-lock:*");
            assertThat(deniedPromptly(type, locks, key).getMessage()).contains("NOPERM").contains("channels")
                    .contains("redis-lock:wake:" + locks.clientId());
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aWaiterWhoseUserMayNotRunSubscribeIsToldSo(Driver driver) throws Exception {
        RedisClients admin = new RedisClients(server);
        clients.add(admin);
        String key = "acl-no-subscribe-" + driver;
        try (LockHandle held = admin.lockTemplate().acquire(key, LockOptions.tryOnce())) {
            RedisLockTemplate locks = userWithout(driver, "+subscribe");
            assertThat(deniedPromptly(Type.EXCLUSIVE, locks, key).getMessage()).contains("NOPERM").contains("'subscribe'");
        }
    }
}
