package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

import io.github.redislock.test.Concurrently;
import io.github.redislock.test.Intervals;
import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.RedisLockTemplate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Every {@code type} of {@code @DistributedLock} and its {@code permits}, through two Spring Boot applications on
 * one Redis deployment configured the usual way ({@code spring.data.redis.*}), with Jedis and with Lettuce: critical
 * sections recorded by enter and exit and checked for overlap, fencing tokens, and the fair lock's order. A subclass
 * names the deployment and its properties; the deployment is started once for the class.
 */
abstract class DistributedLockTopologyContract {

    /** The {@code spring.data.redis.*} properties that reach the deployment. */
    abstract List<String> redisProperties();

    /** One call's time inside its lock, by this JVM's clock, and the fencing token it ran with. */
    record Section(long enter, long exit, long token, boolean exclusive) {

        boolean overlaps(Section other) {
            return enter < other.exit && other.enter < exit;
        }
    }

    /** The locked methods, one per lock type; each records its critical section into the list it is given. */
    public static class Inventory {

        @DistributedLock(key = "'exclusive:' + #name", waitTime = "30s")
        public void exclusive(String name, List<Section> into, @FencingToken long token) throws InterruptedException {
            record(into, token, true, 2);
        }

        @DistributedLock(key = "'fair:' + #name", type = LockType.FAIR, waitTime = "30s")
        public void fair(String name, List<Section> into, @FencingToken long token) throws InterruptedException {
            record(into, token, true, 2);
        }

        @DistributedLock(key = "'stock:' + #name", type = LockType.READ, waitTime = "30s")
        public void read(String name, List<Section> into, Runnable inside, @FencingToken long token)
                throws InterruptedException {
            long enter = System.nanoTime();
            inside.run();
            Thread.sleep(1);
            into.add(new Section(enter, System.nanoTime(), token, false));
        }

        @DistributedLock(key = "'stock:' + #name", type = LockType.WRITE, waitTime = "30s")
        public void write(String name, List<Section> into, @FencingToken long token) throws InterruptedException {
            record(into, token, true, 2);
        }

        @DistributedLock(key = "'printers:' + #name", permits = 3, waitTime = "30s")
        public void print(String name, List<Section> into, @FencingToken long token) throws InterruptedException {
            // long enough that three calls overlap even when a permit takes a few ms to pass on (Lettuce, a busy
            // machine): with 5 ms, a clean-clone run once saw at most 2 at once
            record(into, token, false, 40);
        }

        private static void record(List<Section> into, long token, boolean exclusive, long millis) throws InterruptedException {
            long enter = System.nanoTime();
            Thread.sleep(millis); // widen the window a second holder would need
            into.add(new Section(enter, System.nanoTime(), token, exclusive));
        }
    }

    /** Runs {@code test} with two applications on the deployment, as two instances of one service. */
    void runTwo(String clientType, BiConsumer<AssertableApplicationContext, AssertableApplicationContext> test) {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues(redisProperties().toArray(String[]::new))
                .withPropertyValues("spring.data.redis.client-type=" + clientType)
                .withBean(Inventory.class);
        runner.run(a -> runner.run(b -> {
            assertThat(a).hasNotFailed();
            assertThat(b).hasNotFailed();
            test.accept(a, b);
        }));
    }

    interface Call {
        void run(Inventory inventory, int thread) throws Exception;
    }

    /** Eight threads, half in each application, calling {@code call} {@code times} times each. */
    static void callFromBoth(AssertableApplicationContext a, AssertableApplicationContext b, int times, Call call) {
        List<Inventory> inventories = List.of(a.getBean(Inventory.class), b.getBean(Inventory.class));
        Concurrently.run(8, times, thread -> call.run(inventories.get(thread % 2), thread));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void exclusiveMethodsOfTwoApplicationsNeverOverlapAndRunWithRisingTokens(String clientType) {
        runTwo(clientType, (a, b) -> {
            List<Section> sections = Collections.synchronizedList(new ArrayList<>());
            callFromBoth(a, b, 6, (inventory, thread) -> inventory.exclusive(clientType, sections, 0));
            assertThat(sections).hasSize(48);
            assertOneAtATimeWithRisingTokens(sections);
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void fairMethodsOfTwoApplicationsRunInTheOrderTheCallersQueuedOneAtATime(String clientType) {
        runTwo(clientType, (a, b) -> {
            String queue = "redis-lock:{fair:" + clientType + "}:queue";
            StringRedisTemplate redis = a.getBean(StringRedisTemplate.class);
            List<Section> sections = Collections.synchronizedList(new ArrayList<>());
            List<Integer> served = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newCachedThreadPool();
            List<Section> gate = new ArrayList<>();
            // where each customer's entry is in Redis's queue: a caller whose application stalls past the entry's
            // life (500 ms unrefreshed) is taken for dead and queues again at the end; the order is the queue's
            String[] waiterIds = new String[10];
            Map<String, Double> firstArrival = new ConcurrentHashMap<>();
            Map<String, Double> latestArrival = new ConcurrentHashMap<>();
            AtomicBoolean watching = new AtomicBoolean(true);
            try {
                Future<?> watcher = pool.submit(() -> {
                    while (watching.get()) {
                        redis.opsForZSet().rangeWithScores(queue, 0, -1).forEach(entry -> {
                            firstArrival.putIfAbsent(entry.getValue(), entry.getScore());
                            latestArrival.put(entry.getValue(), entry.getScore());
                        });
                        Thread.sleep(1);
                    }
                    return null;
                });
                CountDownLatch gateTaken = new CountDownLatch(1);
                CountDownLatch everyoneQueued = new CountDownLatch(1);
                // the first call holds the lock until the others queued, one after the other, alternating applications
                Future<?> first = pool.submit(() -> {
                    a.getBean(Inventory.class).fair(clientType, new ArrayList<>() {
                        @Override
                        public boolean add(Section section) {
                            gateTaken.countDown();
                            await(everyoneQueued);
                            return gate.add(section);
                        }
                    }, 0);
                    return null;
                });
                assertThat(gateTaken.await(10, TimeUnit.SECONDS)).as("the first call holds the lock").isTrue();
                long queueing = System.nanoTime();
                List<Future<?>> futures = new ArrayList<>();
                for (int customer = 0; customer < 10; customer++) {
                    int c = customer;
                    AssertableApplicationContext app = customer % 2 == 0 ? b : a;
                    Inventory inventory = app.getBean(Inventory.class);
                    String clientId = app.getBean(RedisLockTemplate.class).clientId();
                    futures.add(pool.submit(() -> {
                        waiterIds[c] = clientId + ":" + Thread.currentThread().getId() + ":";
                        inventory.fair(clientType, new ArrayList<>() {
                            @Override
                            public boolean add(Section section) {
                                served.add(c);
                                return sections.add(section);
                            }
                        }, 0);
                        return null;
                    }));
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (redis.opsForZSet().zCard(queue) != customer + 1) {
                        assertThat(System.nanoTime()).as("customer %d queued", customer).isLessThan(end);
                        Thread.sleep(2);
                    }
                }
                long serving = System.nanoTime();
                everyoneQueued.countDown();
                first.get(10, TimeUnit.SECONDS);
                for (Future<?> future : futures) {
                    future.get(30, TimeUnit.SECONDS);
                }
                watching.set(false);
                watcher.get(10, TimeUnit.SECONDS);
                System.out.println(getClass().getSimpleName() + " (" + clientType + "): 10 callers queued in "
                        + TimeUnit.NANOSECONDS.toMillis(serving - queueing) + " ms, served in "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - serving) + " ms");
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                pool.shutdownNow();
            }
            Comparator<Integer> byFirstArrival = Comparator.comparing(c -> arrivalOf(waiterIds[c], firstArrival));
            Comparator<Integer> byLatestArrival = Comparator.comparing(c -> arrivalOf(waiterIds[c], latestArrival));
            List<Integer> customers = List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
            assertThat(customers.stream().sorted(byFirstArrival).toList()).as("queued one after the other").isEqualTo(customers);
            List<Integer> queuedAgain = customers.stream()
                    .filter(c -> !arrivalOf(waiterIds[c], firstArrival).equals(arrivalOf(waiterIds[c], latestArrival))).toList();
            System.out.println(getClass().getSimpleName() + " (" + clientType + "): callers taken for dead after a pause "
                    + "and queued again: " + queuedAgain);
            assertThat(served).as("served in the order of the queue in Redis (queued again: %s)", queuedAgain)
                    .isEqualTo(customers.stream().sorted(byLatestArrival).toList());
            List<Section> all = new ArrayList<>(gate);
            all.addAll(sections);
            assertOneAtATimeWithRisingTokens(all);
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void writeMethodsOverlapNobodyAndReadMethodsOfTwoApplicationsRunTogether(String clientType) {
        runTwo(clientType, (a, b) -> {
            List<Section> sections = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch bothReading = new CountDownLatch(2);
            Runnable meet = () -> {
                bothReading.countDown();
                await(bothReading); // returns only while the other application's reader is inside too
            };
            callFromBoth(a, b, 1, (inventory, thread) -> {
                if (thread < 2) {
                    inventory.read(clientType, sections, meet, 0); // one reader in each application
                }
            });
            callFromBoth(a, b, 8, (inventory, thread) -> {
                if (ThreadLocalRandom.current().nextInt(3) == 0) {
                    inventory.write(clientType, sections, 0);
                } else {
                    inventory.read(clientType, sections, () -> { }, 0);
                }
            });
            assertThat(sections).hasSize(66).anyMatch(Section::exclusive);
            for (Section writer : sections) {
                if (writer.exclusive()) {
                    for (Section other : sections) {
                        if (other != writer) {
                            assertThat(writer.overlaps(other)).as("a method overlapping a write method").isFalse();
                            assertThat(other.token()).as("a token shared with a writer").isNotEqualTo(writer.token());
                        }
                    }
                }
            }
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jedis", "lettuce"})
    void aPermitsAttributeAdmitsThatManyCallsOfTwoApplicationsAtOnce(String clientType) {
        runTwo(clientType, (a, b) -> {
            List<Section> sections = Collections.synchronizedList(new ArrayList<>());
            callFromBoth(a, b, 6, (inventory, thread) -> inventory.print(clientType, sections, 0));
            assertThat(sections).hasSize(48);
            assertThat(maxConcurrency(sections)).as("calls at once").isEqualTo(3);
            assertThat(sections.stream().map(Section::token)).as("a token per call").doesNotHaveDuplicates();
        });
    }

    static void assertOneAtATimeWithRisingTokens(List<Section> sections) {
        List<Section> byEntry = new ArrayList<>(sections);
        byEntry.sort(Comparator.comparingLong(Section::enter));
        for (int i = 1; i < byEntry.size(); i++) {
            assertThat(byEntry.get(i).enter()).as("call %d entered before call %d left", i, i - 1)
                    .isGreaterThan(byEntry.get(i - 1).exit());
            assertThat(byEntry.get(i).token()).as("token of call %d", i).isGreaterThan(byEntry.get(i - 1).token());
        }
    }

    static int maxConcurrency(List<Section> sections) {
        return Intervals.maxConcurrency(sections, Section::enter, Section::exit);
    }

    /** The arrival in Redis of the one queue entry whose id starts with {@code waiterId} (client id:thread:). */
    private static Double arrivalOf(String waiterId, Map<String, Double> arrivals) {
        return arrivals.entrySet().stream().filter(entry -> entry.getKey().startsWith(waiterId)).map(Map.Entry::getValue)
                .findFirst().orElseThrow(() -> new AssertionError("never saw " + waiterId + " queued: " + arrivals.keySet()));
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("timed out waiting for the other caller");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
