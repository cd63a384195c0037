package io.github.redislock.autoconfigure;

import io.github.redislock.autoconfigure.actuate.LocksEndpoint;
import io.github.redislock.autoconfigure.actuate.RedisLockActuatorAutoConfiguration;
import io.github.redislock.autoconfigure.metrics.RedisLockMetricsAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.LockContext;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.LockType;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.RedlockTemplate;
import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** {@code redis-lock.redlock.*} and {@code @DistributedLock(locks = "redlockTemplate")} on five real, independent masters. */
@WithRedisNodes(5)
class RedlockAutoConfigurationTest {

    static RedisNodes nodes;

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class, RedlockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + nodes.node(0).port());
    }

    private static String nodesProperty() {
        return "redis-lock.redlock.nodes=" + String.join(",", nodes.uris());
    }

    @Test
    void withoutRedlockNodesThereIsNoRedlockTemplate() {
        runner().run(context -> assertThat(context).hasSingleBean(RedisLockTemplate.class)
                .doesNotHaveBean(RedlockTemplate.class));
    }

    @Test
    void redlockNodesAddARedlockTemplateNextToTheApplicationsTemplateUsingLettuceByDefault() {
        runner().withPropertyValues(nodesProperty(), "redis-lock.redlock.timeout=750ms", "redis-lock.key-prefix=shop")
                .run(context -> {
                    assertThat(context).hasSingleBean(RedisLockTemplate.class).hasSingleBean(RedlockTemplate.class)
                            .hasBean("redlockTemplate");
                    RedlockTemplate redlock = context.getBean(RedlockTemplate.class);
                    assertThat(redlock.nodeNames()).containsExactlyElementsOf(
                            nodes.nodes().stream().map(n -> n.host() + ":" + n.port()).toList());
                    assertThat(redlock.quorum()).isEqualTo(3);
                    assertThat(redlock.config().keyPrefix()).isEqualTo("shop");
                    assertThat(redlock.restartDelay()).as("the lease time by default").isEqualTo(redlock.config().watchdogLease());
                    assertThat(context.getBean(RedlockConnections.class).templates().values())
                            .allSatisfy(t -> assertThat(t.getConnectionFactory()).isInstanceOf(LettuceConnectionFactory.class));
                    int holding = redlock.execute("boot:lettuce", io.github.redislock.core.LockOptions.tryOnce(), handle -> {
                        int count = 0;
                        for (RedisServerProcess node : nodes.nodes()) {
                            count += node.command("EXISTS", "shop:{boot:lettuce}").equals("1") ? 1 : 0;
                        }
                        return count;
                    });
                    // held once a majority granted it; the others' grants may land a moment later
                    assertThat(holding).isBetween(3, 5);
                });
    }

    @Test
    void theNodesUseJedisWhenItIsTheApplicationsDriver() {
        runner().withClassLoader(new FilteredClassLoader("io.lettuce")).withPropertyValues(nodesProperty()).run(context -> {
            assertThat(context.getBean(RedlockConnections.class).templates().values())
                    .allSatisfy(t -> assertThat(t.getConnectionFactory()).isInstanceOf(JedisConnectionFactory.class));
            try (var handle = context.getBean(RedlockTemplate.class).acquire("boot:jedis",
                    io.github.redislock.core.LockOptions.tryOnce())) {
                assertThat(handle.fencingToken()).isPositive();
            }
        });
    }

    @Test
    void anAnnotatedRedlockMethodExcludesConcurrentCallsAndHoldsTheLockOnTheNodes() {
        runner().withPropertyValues(nodesProperty()).withUserConfiguration(LedgerConfig.class).run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> calls = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    calls.add(pool.submit(() -> {
                        ledger.add("acct-1");
                        return null;
                    }));
                }
                for (Future<?> call : calls) {
                    call.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(ledger.balance()).isEqualTo(40);
            assertThat(ledger.nodesHoldingDuringCall()).isBetween(3, 5);
            assertThat(ledger.lastToken()).isPositive();
        });
    }

    @Test
    void aMethodWithoutLocksKeepsLockingOnTheApplicationsRedisWhenRedlockNodesAreSet() {
        runner().withPropertyValues(nodesProperty()).withUserConfiguration(LedgerConfig.class).run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            assertThat(ledger.onTheApplicationsRedis("acct-2")).as("nodes holding the lock during the call, node 0 first")
                    .containsExactly(1, 0, 0, 0, 0);
        });
    }

    @Test
    void aRedlockMethodShowsInTheLocksEndpointMetricsAndHealthUnderItsBeanName() {
        assumeTrue(LockOperations.class.isAssignableFrom(RedlockTemplate.class),
                "runs once RedlockTemplate implements LockOperations (issue 22)");
        runner().withConfiguration(AutoConfigurations.of(RedisLockMetricsAutoConfiguration.class,
                        RedisLockActuatorAutoConfiguration.class))
                .withPropertyValues(nodesProperty(), "management.endpoints.web.exposure.include=locks")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new).withBean(HeldReport.class).run(context -> {
                    context.getBean(HeldReport.class).run();
                    LocksEndpoint.BackendDescriptor redlock = context.getBean(LocksEndpoint.class).locks().backends()
                            .get("redlockTemplate");
                    assertThat(redlock.held()).as("kept past the method by holdAtLeast").singleElement()
                            .satisfies(held -> {
                                assertThat(held.key()).isEqualTo("redlock-report");
                                assertThat(held.state()).startsWith("held until");
                            });
                    assertThat(context.getBean(MeterRegistry.class).get("redis.lock.acquire").tag("locks", "redlockTemplate")
                            .tag("name", "HeldReport.run").tag("outcome", "acquired").timer().count()).isEqualTo(1);
                    assertThat(context.getBean("lockHealthIndicator", CompositeHealthContributor.class)
                            .getContributor("redlockTemplate")).isNotNull();
                });
    }

    @Test
    void aRedlockAnnotationWithoutRedlockNodesStopsTheApplicationNamingTheBeansAndTheProperty() {
        runner().withUserConfiguration(LedgerConfig.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("Ledger.add(String)")
                    .hasMessageContaining("locks = \"redlockTemplate\" names no bean")
                    .hasMessageContaining("the LockOperations beans are [redisLockTemplate]")
                    .hasMessageContaining("redis-lock.redlock.nodes");
        });
    }

    @ParameterizedTest
    @ValueSource(classes = {ReadLocked.class, WriteLocked.class, FairLocked.class, SemaphoreLocked.class})
    void aLockTypeOnlyOneRedisServesStopsTheApplicationOnRedlockNamingTheMethodAndTheBean(Class<?> bean) {
        runner().withPropertyValues(nodesProperty()).withBean(bean).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining(bean.getSimpleName() + ".run()")
                    .hasMessageContaining("needs a RedisLockTemplate")
                    .hasMessageContaining("the LockOperations bean 'redlockTemplate' is a RedlockTemplate");
        });
    }

    @Test
    void theRestartDelayFollowsItsPropertyAndMayNotBeShorterThanTheLeaseTime() {
        runner().withPropertyValues(nodesProperty(), "redis-lock.redlock.restart-delay=45s").run(context ->
                assertThat(context.getBean(RedlockTemplate.class).restartDelay()).isEqualTo(java.time.Duration.ofSeconds(45)));
        runner().withPropertyValues(nodesProperty(), "redis-lock.lease-time=20s", "redis-lock.redlock.restart-delay=10s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("redis-lock.redlock.restart-delay")
                            .hasMessageContaining("redis-lock.lease-time");
                });
    }

    @Test
    void aRedlockAnnotationWithALeaseLongerThanTheRestartDelayStopsTheApplication() {
        runner().withPropertyValues(nodesProperty(), "redis-lock.redlock.restart-delay=40s", "report.lease=41s")
                .withUserConfiguration(LongLeaseConfig.class).run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining("LongLease.run()")
                            .hasMessageContaining("redis-lock.redlock.restart-delay").hasMessageContaining("PT41S");
                });
        runner().withPropertyValues(nodesProperty(), "redis-lock.redlock.restart-delay=40s", "report.lease=40s")
                .withUserConfiguration(LongLeaseConfig.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void anEvenNumberOfNodesStopsTheApplicationSayingWhy() {
        runner().withPropertyValues("redis-lock.redlock.nodes=" + String.join(",", nodes.uris().subList(0, 4))).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("redis-lock.redlock.nodes lists 4 node(s)")
                    .hasMessageContaining("odd number");
        });
    }

    @Test
    void aMalformedNodeStopsTheApplicationNamingTheEntry() {
        runner().withPropertyValues("redis-lock.redlock.nodes=redis://a:1,http://b:2,redis://c:3").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("redis-lock.redlock.nodes[1]")
                    .hasMessageContaining("must start with redis://");
        });
    }

    @Test
    void nodeAddressesCarryUserPasswordDatabaseAndTls() {
        RedlockConnections.Address address = RedlockConnections.Address.parse("rediss://app:s3cr%40t@cache-1:6380/2", "n[0]");
        assertThat(address).isEqualTo(new RedlockConnections.Address("cache-1", 6380, "app", "s3cr@t", 2, true));
        assertThat(address.name()).isEqualTo("cache-1:6380").doesNotContain("s3cr");
        assertThat(RedlockConnections.Address.parse("redis://pw@h", "n[0]"))
                .isEqualTo(new RedlockConnections.Address("h", 6379, null, "pw", 0, false));
        assertThatThrownBy(() -> RedlockConnections.Address.parse("redis://h:1/x", "n[2]")).hasMessageContaining("n[2]")
                .hasMessageContaining("database number");
    }

    @Configuration(proxyBeanMethods = false)
    static class LedgerConfig {

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    public static class Ledger {

        int balance; // read-sleep-write, not atomic: concurrent calls that both ran would lose an update
        volatile int nodesHoldingDuringCall;
        volatile long lastToken;

        @DistributedLock(key = "'ledger:' + #account", waitTime = "60s", locks = "redlockTemplate")
        public void add(String account) throws InterruptedException {
            int read = balance;
            Thread.sleep(2);
            balance = read + 1;
            int holding = 0;
            for (RedisServerProcess node : nodes.nodes()) {
                holding += node.command("EXISTS", "redis-lock:{ledger:" + account + "}").equals("1") ? 1 : 0;
            }
            nodesHoldingDuringCall = holding;
            lastToken = LockContext.fencingToken();
        }

        /** Which nodes hold the lock of {@code account} while this method, locked without {@code locks}, runs. */
        @DistributedLock(key = "'ledger:' + #account", waitTime = "60s")
        public List<Integer> onTheApplicationsRedis(String account) {
            return nodes.nodes().stream()
                    .map(node -> node.command("EXISTS", "redis-lock:{ledger:" + account + "}").equals("1") ? 1 : 0).toList();
        }

        // read through methods: the bean is a proxy, its fields are not the target's
        public int balance() {
            return balance;
        }

        public int nodesHoldingDuringCall() {
            return nodesHoldingDuringCall;
        }

        public long lastToken() {
            return lastToken;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LongLeaseConfig {

        @Bean
        LongLease longLease() {
            return new LongLease();
        }
    }

    public static class HeldReport {

        @DistributedLock(key = "'redlock-report'", holdAtLeast = "5s", locks = "redlockTemplate")
        public void run() {
        }
    }

    public static class LongLease {

        @DistributedLock(key = "'report'", leaseTime = "${report.lease}", locks = "redlockTemplate")
        public void run() {
        }
    }

    public static class ReadLocked {

        @DistributedLock(key = "'r'", type = LockType.READ, locks = "redlockTemplate")
        public void run() {
        }
    }

    public static class WriteLocked {

        @DistributedLock(key = "'w'", type = LockType.WRITE, locks = "redlockTemplate")
        public void run() {
        }
    }

    public static class FairLocked {

        @DistributedLock(key = "'f'", type = LockType.FAIR, locks = "redlockTemplate")
        public void run() {
        }
    }

    public static class SemaphoreLocked {

        @DistributedLock(key = "'s'", permits = 2, locks = "redlockTemplate")
        public void run() {
        }
    }
}
