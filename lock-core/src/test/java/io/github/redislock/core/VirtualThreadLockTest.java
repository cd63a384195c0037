package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Locks taken from virtual threads (Java 21+). The build targets Java 17, so the executor is looked
 * up reflectively; on an older JVM the test is skipped. The {@code jdk25} Maven profile runs
 * it on a JDK 25 Maven toolchain.
 */
class VirtualThreadLockTest {

    @Test
    void twoHundredVirtualThreadsOverTwoClientsNeverLoseAnUpdate() throws Exception {
        ExecutorService pool = virtualThreadExecutor();
        try (RedisServerProcess server = RedisServerProcess.start(); RedisClients clients = new RedisClients(server)) {
            RedisLockTemplate first = clients.lockTemplate();
            RedisLockTemplate second = clients.lockTemplate();
            StringRedisTemplate redis = clients.redisTemplate();
            redis.opsForValue().set("counter", "0");
            int threads = 200;
            int rounds = 3;
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                RedisLockTemplate template = t % 2 == 0 ? first : second;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        template.execute("hot", LockOptions.waitFor(Duration.ofMinutes(1)), lock -> {
                            long value = Long.parseLong(redis.opsForValue().get("counter"));
                            redis.opsForValue().set("counter", Long.toString(value + 1));
                            return null;
                        });
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(2, TimeUnit.MINUTES);
            }
            assertThat(redis.opsForValue().get("counter")).isEqualTo(Integer.toString(threads * rounds));
            assertThat(first.diagnostics().localLockCount() + second.diagnostics().localLockCount()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    private static ExecutorService virtualThreadExecutor() {
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (NoSuchMethodException e) {
            assumeTrue(false, "virtual threads need Java 21+, running on " + Runtime.version());
            throw new IllegalStateException(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
