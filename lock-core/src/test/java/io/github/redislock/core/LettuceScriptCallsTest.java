package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The lock scripts on Lettuce's shared native connection ({@link LettuceScriptCalls}): chosen for a factory that
 * shares it, and behaving towards the caller as Spring Data Redis's own Lettuce path does (scripts reloaded, the
 * factory's command timeout, Spring's exceptions).
 */
@WithRedis(freshForEachTest = true)
@ExtendWith(RedisClientsExtension.class)
class LettuceScriptCallsTest {

    RedisServerProcess server;
    RedisClients clients;
    StringRedisTemplate redis;

    @Test
    void scriptsRunOnTheSharedNativeConnectionOnlyForAPlainTemplateOnAFactoryThatSharesIt() {
        StringRedisTemplate shared = clients.lettuceRedisTemplate(Duration.ofSeconds(5), true);
        assertThat(new ScriptRunner(shared, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).isTrue();
        StringRedisTemplate notShared = clients.lettuceRedisTemplate(Duration.ofSeconds(5), false);
        assertThat(new ScriptRunner(notShared, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).isFalse();
        StringRedisTemplate subclass = new StringRedisTemplate(shared.getRequiredConnectionFactory()) {
        };
        assertThat(new ScriptRunner(subclass, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).isFalse();
        assertThat(new ScriptRunner(redis, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).as("Jedis").isFalse();
    }

    @Test
    void locksOfTwoClientsOnSharedConnectionsNeverOverlap() throws Exception {
        assertTwoClientsExclude(clients.lettuceRedisTemplate(Duration.ofSeconds(5), true));
    }

    @Test
    void aFactoryThatDoesNotShareItsConnectionStillLocksThroughSpringDataRedis() throws Exception {
        assertTwoClientsExclude(clients.lettuceRedisTemplate(Duration.ofSeconds(5), false));
    }

    @Test
    void scriptsFlushedWhileLockingAreLoadedAgain() throws Exception {
        RedisLockTemplate locks = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(5), true));
        ScriptCallChecks.lockWhileScriptsAreFlushed(locks, server);
        assertThat(redis.keys("redis-lock:{flushed:*}")).isEmpty();
    }

    @Test
    void aPausedRedisFailsTheCallAfterTheFactorysCommandTimeoutWithSpringsException() throws Exception {
        RedisLockTemplate locks = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofMillis(300), true));
        locks.acquire("paused:warm-up", LockOptions.tryOnce()).release();
        server.command("CLIENT", "PAUSE", "3000", "ALL");
        long start = System.nanoTime();
        assertThatThrownBy(() -> locks.acquire("paused", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .cause().isInstanceOf(QueryTimeoutException.class);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // without the factory's 300 ms, Lettuce's default of 60 s would wait the 3 s pause out and take the lock
        assertThat(tookMillis).isLessThan(2500);
    }

    @Test
    void aStoppedRedisGivesSpringsExceptionNotLettuces() {
        RedisLockTemplate locks = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofMillis(500), true));
        LockHandle held = locks.acquire("stopped", LockOptions.tryOnce());
        server.stop();
        assertThatThrownBy(() -> locks.acquire("stopped:other", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .cause().isInstanceOf(DataAccessException.class);
        // a release that cannot reach Redis leaves the lock to its lease; a raw Lettuce exception would escape it
        assertThatCode(held::release).doesNotThrowAnyException();
        assertThat(held.isHeld()).isFalse();
    }

    @Test
    void locksGoOnAfterTheFactoryResetsItsSharedConnection() {
        StringRedisTemplate lettuce = clients.lettuceRedisTemplate(Duration.ofSeconds(5), true);
        RedisLockTemplate locks = clients.lockTemplate(lettuce);
        locks.acquire("reset", LockOptions.tryOnce()).release();
        ((LettuceConnectionFactory) lettuce.getRequiredConnectionFactory()).resetConnection(); // closes the shared one
        try (LockHandle handle = locks.acquire("reset", LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
            assertThat(redis.hasKey("redis-lock:{reset}")).isTrue();
        }
        assertThat(redis.hasKey("redis-lock:{reset}")).isFalse();
    }

    private void assertTwoClientsExclude(StringRedisTemplate lettuce) throws Exception {
        RedisLockTemplate first = clients.lockTemplate(lettuce);
        RedisLockTemplate second = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(5),
                ((LettuceConnectionFactory) lettuce.getRequiredConnectionFactory()).getShareNativeConnection()));
        ScriptCallChecks.assertTwoClientsExclude(first, second);
    }
}
