package io.github.redislock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What ShedLock's suites leave out: locks unlocked and extended on other threads than the job's, and two clients. */
@WithRedis
class RedisLockTemplateLockProviderTest {

    static RedisServerProcess server;
    private static TestRedis redis;
    private static TestRedis otherInstance;
    private static RedisLockTemplateLockProvider provider;
    private static RedisLockTemplateLockProvider otherProvider;

    @BeforeAll
    static void startClients() {
        redis = new TestRedis(server);
        otherInstance = new TestRedis(server);
        provider = new RedisLockTemplateLockProvider(redis.locks);
        otherProvider = new RedisLockTemplateLockProvider(otherInstance.locks);
    }

    @AfterAll
    static void stopClients() {
        provider.close();
        otherProvider.close();
        redis.close();
        otherInstance.close();
    }

    @Test
    void aLockUnlockedOnAnotherThreadIsFreeAtOnce() {
        SimpleLock lock = provider.lock(config("unlocked-elsewhere", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();

        CompletableFuture.runAsync(lock::unlock).join();

        assertThat(otherProvider.lock(config("unlocked-elsewhere", Duration.ofMinutes(1), Duration.ZERO)))
                .hasValueSatisfying(SimpleLock::unlock);
    }

    @Test
    void aLockExtendedOnAnotherThreadOutlivesItsFirstLease() throws InterruptedException {
        SimpleLock lock = provider.lock(config("extended-elsewhere", Duration.ofMillis(500), Duration.ZERO)).orElseThrow();

        // as ShedLock's KeepAliveLockProvider does, from its scheduler's thread
        Optional<SimpleLock> extended = CompletableFuture
                .supplyAsync(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO)).join();
        Thread.sleep(700);

        assertThat(extended).isPresent();
        assertThat(otherProvider.lock(config("extended-elsewhere", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();
        extended.get().unlock();
        assertThat(otherProvider.lock(config("extended-elsewhere", Duration.ofMinutes(1), Duration.ZERO)))
                .hasValueSatisfying(SimpleLock::unlock);
    }

    @Test
    void anotherInstanceCannotLockUntilLockAtLeastForHasPassed() throws InterruptedException {
        provider.lock(config("at-least", Duration.ofSeconds(10), Duration.ofMillis(400))).orElseThrow().unlock();

        assertThat(otherProvider.lock(config("at-least", Duration.ofMinutes(1), Duration.ZERO))).isEmpty();
        Thread.sleep(450);
        assertThat(otherProvider.lock(config("at-least", Duration.ofMinutes(1), Duration.ZERO)))
                .hasValueSatisfying(SimpleLock::unlock);
    }

    @Test
    void theLockIsTheEnginesExclusiveLockOfThePrefixedName() {
        SimpleLock lock = provider.lock(config("named", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        try {
            assertThat(redis.locks.lock("shedlock:named").tryLock()).isFalse();
            assertThat(server.command("PTTL", "redis-lock:{shedlock:named}")).satisfies(
                    ttl -> assertThat(Long.parseLong(ttl)).isBetween(50_000L, 60_000L));
        } finally {
            lock.unlock();
        }
    }

    private static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
    }
}
