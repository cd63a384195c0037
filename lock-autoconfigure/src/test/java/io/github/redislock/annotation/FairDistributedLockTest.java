package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code type = FAIR} through the annotation, on a real redis-server: two applications served in arrival order. */
@WithRedis
class FairDistributedLockTest {

    static RedisServerProcess server;

    /** A ticket counter served first come, first served. */
    static class Tickets {

        final List<Integer> served = Collections.synchronizedList(new ArrayList<>());
        final List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        int counter; // not atomic on purpose: only exclusion keeps it right

        @DistributedLock(key = "'tickets'", type = LockType.FAIR, waitTime = "30s")
        public void serve(int customer, @FencingToken long token) throws InterruptedException {
            int value = counter;
            Thread.sleep(2); // widen the window a second holder would need
            counter = value + 1;
            served.add(customer);
            tokens.add(token);
        }

        // read through methods: the bean is a proxy, whose own fields are not the target's
        public List<Integer> served() {
            return served;
        }

        public List<Long> tokens() {
            return tokens;
        }

        public int counter() {
            return counter;
        }

        @DistributedLock(key = "'tickets'", type = LockType.FAIR, waitTime = "200ms", onFailure = OnFailure.SKIP)
        public String serveIfQuick() {
            return "served";
        }
    }

    private void run(Consumer<AssertableApplicationContext> test) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + server.port())
                .withBean(Tickets.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    test.accept(context);
                });
    }

    @Test
    void customersOfTwoApplicationsAreServedInTheOrderTheyQueuedOneAtATime() {
        run(a -> run(b -> {
            RedisLockTemplate template = a.getBean(RedisLockTemplate.class);
            Tickets first = a.getBean(Tickets.class);
            Tickets second = b.getBean(Tickets.class);
            ExecutorService pool = Executors.newCachedThreadPool();
            try {
                LockHandle gate = template.fairLock("tickets").acquire(LockOptions.tryOnce());
                List<Future<?>> futures = new ArrayList<>();
                for (int customer = 0; customer < 10; customer++) {
                    int c = customer;
                    Tickets tickets = customer % 2 == 0 ? first : second;
                    futures.add(pool.submit(() -> {
                        tickets.serve(c, 0);
                        return null;
                    }));
                    awaitQueueLength(customer + 1);
                }
                assertThat(second.serveIfQuick()).isNull(); // not its turn within 200 ms: skipped, not queued ahead
                gate.release();
                for (Future<?> future : futures) {
                    future.get(30, TimeUnit.SECONDS);
                }
                assertThat(first.served()).containsExactly(0, 2, 4, 6, 8);
                assertThat(second.served()).containsExactly(1, 3, 5, 7, 9);
                assertThat(first.counter() + second.counter()).isEqualTo(10);
                List<Long> tokens = new ArrayList<>(first.tokens());
                tokens.addAll(second.tokens());
                assertThat(tokens).doesNotHaveDuplicates().allSatisfy(token -> assertThat(token).isGreaterThan(gate.fencingToken()));
                assertThat(first.serveIfQuick()).isEqualTo("served");
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                pool.shutdownNow();
            }
        }));
    }

    private static void awaitQueueLength(int expected) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!server.command("ZCARD", "redis-lock:{tickets}:queue").equals(Integer.toString(expected))) {
            assertThat(System.nanoTime()).as("customer %d queued", expected - 1).isLessThan(end);
            Thread.sleep(2);
        }
    }
}
