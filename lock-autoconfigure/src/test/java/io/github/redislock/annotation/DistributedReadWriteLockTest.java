package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code type = READ} and {@code type = WRITE} through the annotation, in two applications on a real redis-server. */
@WithRedis
class DistributedReadWriteLockTest {

    static RedisServerProcess server;

    private void run(Consumer<AssertableApplicationContext> test) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + server.port())
                .withBean(Catalog.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    test.accept(context);
                });
    }

    @Test
    void readMethodsOfTwoApplicationsRunTogether() {
        run(a -> run(b -> {
            Catalog first = a.getBean(Catalog.class);
            Catalog second = b.getBean(Catalog.class);
            CountDownLatch bothIn = new CountDownLatch(2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Runnable meet = () -> {
                    bothIn.countDown();
                    await(bothIn); // returns only if the other reader is inside too
                };
                Future<Long> one = pool.submit(() -> first.read("shared", meet, 0));
                Future<Long> two = pool.submit(() -> second.read("shared", meet, 0));
                assertThat(one.get(10, TimeUnit.SECONDS)).isEqualTo(two.get(10, TimeUnit.SECONDS)).isPositive();
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                pool.shutdownNow();
            }
        }));
    }

    @Test
    void noWriteMethodOverlapsAnyReadOrWriteMethodOfTwoApplications() {
        run(a -> run(b -> {
            List<Catalog> catalogs = List.of(a.getBean(Catalog.class), b.getBean(Catalog.class));
            List<long[]> sections = Collections.synchronizedList(new ArrayList<>()); // {enter, exit, 1 if writer}
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    Catalog catalog = catalogs.get(t % 2);
                    futures.add(pool.submit(() -> {
                        for (int i = 0; i < 20; i++) {
                            boolean write = ThreadLocalRandom.current().nextInt(4) == 0;
                            long[] section = new long[3];
                            Runnable inside = () -> {
                                section[0] = System.nanoTime();
                                sleep(2);
                                section[1] = System.nanoTime();
                            };
                            if (write) {
                                catalog.write("intervals", inside, 0);
                                section[2] = 1;
                            } else {
                                catalog.read("intervals", inside, 0);
                            }
                            sections.add(section);
                        }
                        return null;
                    }));
                }
                for (Future<?> future : futures) {
                    future.get(120, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                pool.shutdownNow();
            }
            assertThat(sections).hasSize(160);
            for (long[] writer : sections) {
                if (writer[2] == 1) {
                    for (long[] other : sections) {
                        if (other != writer) {
                            assertThat(other[1] <= writer[0] || other[0] >= writer[1])
                                    .as("a method overlapping a write method").isTrue();
                        }
                    }
                }
            }
        }));
    }

    @Test
    void aWriteMethodCalledFromAReadMethodOnTheSameKeyFailsAtOnceAndAReadFromAWriteRuns() {
        run(a -> {
            Catalog catalog = a.getBean(Catalog.class);
            assertThatThrownBy(() -> catalog.read("nested", () -> catalog.write("nested", () -> { }, 0), 0))
                    .isInstanceOf(IllegalMonitorStateException.class)
                    .hasMessageContaining("upgrading is not supported");
            long[] readToken = new long[1];
            long writeToken = catalog.write("nested", () -> readToken[0] = catalog.read("nested", () -> { }, 0), 0);
            assertThat(readToken[0]).isGreaterThan(writeToken);
        });
    }

    @Test
    void aReadMethodThatSkipsReturnsNullWhileAWriteMethodRunsElsewhere() {
        run(a -> run(b -> {
            Catalog writer = a.getBean(Catalog.class);
            Catalog reader = b.getBean(Catalog.class);
            Long[] skipped = {0L};
            writer.write("skip", () -> skipped[0] = runElsewhere(() -> reader.tryRead("skip")), 0);
            assertThat(skipped[0]).isNull();
            assertThat(reader.tryRead("skip")).isPositive();
        }));
    }

    private static Long runElsewhere(java.util.concurrent.Callable<Long> action) {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            return thread.submit(action).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            thread.shutdownNow();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("the other reader never came in");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    static class Catalog {

        @DistributedLock(key = "'catalog:' + #id", type = LockType.READ, waitTime = "30s")
        public long read(String id, Runnable inside, @FencingToken long token) {
            inside.run();
            return token;
        }

        @DistributedLock(key = "'catalog:' + #id", type = LockType.WRITE, waitTime = "30s")
        public long write(String id, Runnable inside, @FencingToken long token) {
            inside.run();
            return token;
        }

        @DistributedLock(key = "'catalog:' + #id", type = LockType.READ, waitTime = "0s", onFailure = OnFailure.SKIP)
        public Long tryRead(String id) {
            return LockContext.fencingToken();
        }
    }
}
