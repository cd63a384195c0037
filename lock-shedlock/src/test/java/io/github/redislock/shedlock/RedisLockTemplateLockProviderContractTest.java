package io.github.redislock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's own provider contract (its shedlock-test-support suites: locking, no second lock, lockAtMostFor as a
 * timeout, lockAtLeastFor, extension, its fuzz test) run against the provider on a real Redis.
 */
@WithRedis
class RedisLockTemplateLockProviderContractTest extends AbstractExtensibleLockProviderIntegrationTest {

    static RedisServerProcess server;
    private static TestRedis redis;
    private static RedisLockTemplateLockProvider provider;

    @BeforeAll
    static void startClient() {
        redis = new TestRedis(server);
        provider = new RedisLockTemplateLockProvider(redis.locks);
    }

    @AfterAll
    static void stopClient() {
        provider.close();
        redis.close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(server.command("EXISTS", redisKey(lockName))).as("lock %s in Redis", lockName).isEqualTo("0");
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(server.command("EXISTS", redisKey(lockName))).as("lock %s in Redis", lockName).isEqualTo("1");
    }

    private static String redisKey(String lockName) {
        return "redis-lock:{shedlock:" + lockName + "}";
    }
}
