package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.redislock.autoconfigure.LockLostEvent;
import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Concurrently;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.context.ApplicationListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * What the integration test leaves out: opposite key orders, the shared deadline, every SKIP return
 * type, reentrancy and nesting through the annotation, bean references, lost-lock events. Real
 * redis-server, Jedis and Lettuce.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"jedis", "lettuce"})
@WithRedis
class DistributedLockBehaviourTest {

    static RedisServerProcess server;

    @Parameter
    String clientType;

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class, AopAutoConfiguration.class,
                        DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
                        "spring.data.redis.client-type=" + clientType)
                .withBean(Transfers.class).withBean(Skipping.class).withBean(Reentrant.class).withBean(Nested.class)
                .withBean(Tokens.class).withBean(Busy.class);
    }

    private void run(ContextConsumer<AssertableApplicationContext> test) {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            test.accept(context);
        });
    }

    @Test
    void theApplicationUsesTheConfiguredDriver() {
        run(context -> assertThat(context.getBean(RedisConnectionFactory.class))
                .isInstanceOf(clientType.equals("jedis") ? JedisConnectionFactory.class : LettuceConnectionFactory.class));
    }

    @Test
    void callersNamingTheSameKeysInOppositeOrderNeverDeadlock() {
        run(a -> run(b -> {
            List<Transfers> transfers = List.of(a.getBean(Transfers.class), b.getBean(Transfers.class));
            Concurrently.run(4, 15, thread -> {
                boolean forward = thread % 2 == 0;
                // a deadlock would surface as LockNotAcquiredException after the 30 s wait
                transfers.get(thread < 2 ? 0 : 1).transferPatiently(forward ? "x" : "y", forward ? "y" : "x");
            });
            assertThat(server.command("EXISTS", "redis-lock:{acct:x}", "redis-lock:{acct:y}")).isEqualTo("0");
        }));
    }

    @Test
    void severalKeysAreTakenInSortedOrder() {
        run(context -> assertThat(context.getBean(Transfers.class).keysHeld("zed", "abe"))
                .containsExactly("acct:abe", "acct:zed"));
    }

    @Test
    void severalKeysShareOneWaitTime() {
        run(context -> {
            try (OtherClient other = new OtherClient(server)) {
                // acct:a is busy for the first 600 ms, acct:b throughout; the whole call may wait 1 s
                CountDownLatch aHeld = new CountDownLatch(1);
                CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
                    try (LockHandle a = other.locks.acquire("acct:a", LockOptions.tryOnce())) {
                        aHeld.countDown();
                        pause(600);
                    }
                });
                assertThat(aHeld.await(5, TimeUnit.SECONDS)).isTrue();
                try (LockHandle b = other.locks.acquire("acct:b", LockOptions.tryOnce())) {
                    long start = System.nanoTime();
                    assertThatThrownBy(() -> context.getBean(Transfers.class).transfer("a", "b"))
                            .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("'acct:b'")
                            .hasMessageContaining("within 1s");
                    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    assertThat(millis).as("one second in all, not a second for acct:b after acct:a").isBetween(950L, 1500L);
                }
                holder.get(5, TimeUnit.SECONDS);
                assertThat(server.command("EXISTS", "redis-lock:{acct:a}")).as("acct:a given back").isEqualTo("0");
            }
        });
    }

    @Test
    void skipReturnsEmptyValuesOfEveryCollectionTypeAndRunsNothing() {
        run(context -> {
            Skipping skipping = context.getBean(Skipping.class);
            try (OtherClient other = new OtherClient(server);
                    LockHandle held = other.locks.acquire("skip", LockOptions.tryOnce())) {
                assertThat(skipping.optional()).isEmpty();
                assertThat(skipping.list()).isEmpty();
                assertThat(skipping.set()).isEmpty();
                assertThat(skipping.map()).isEmpty();
                assertThat(skipping.collection()).isEmpty();
                assertThat(skipping.boxed()).isNull();
                assertThat(skipping.future()).succeedsWithin(java.time.Duration.ofSeconds(30)).isNull(); // on the holder thread
                skipping.nothing();
                assertThat(skipping.runs()).as("no method body ran").isZero();
            }
            assertThat(skipping.set()).containsExactly("ran");
            assertThat(skipping.map()).containsEntry("ran", "yes");
            assertThat(skipping.runs()).isEqualTo(2);
        });
    }

    @Test
    void aLockedMethodCallingAnotherOnTheSameKeyReentersAndSharesTheToken() {
        run(context -> {
            long[] tokens = context.getBean(Reentrant.class).outer("r");
            assertThat(tokens[0]).isPositive().isEqualTo(tokens[1]);
            assertThat(server.command("EXISTS", "redis-lock:{reentrant:r}")).isEqualTo("0");
        });
    }

    @Test
    void aNestedLockedMethodSeesItsOwnTokenAndTheCallerSeesItsTokenAgainAfterwards() {
        run(context -> {
            long[] tokens = context.getBean(Nested.class).outer();
            assertThat(tokens[0]).isPositive();
            assertThat(tokens[1]).isPositive().isNotEqualTo(tokens[0]);
            assertThat(tokens[2]).isEqualTo(tokens[0]);
            assertThat(LockContext.isActive()).isFalse();
        });
    }

    @Test
    void theFencingTokenParameterMayBeABoxedLongAndTokensGrowAcrossClients() {
        run(context -> {
            Tokens tokens = context.getBean(Tokens.class);
            long first = tokens.boxed(-1L);
            long fromOtherClient;
            try (OtherClient other = new OtherClient(server);
                    LockHandle handle = other.locks.acquire("token", LockOptions.tryOnce())) {
                fromOtherClient = handle.fencingToken();
            }
            long third = tokens.boxed(null);
            assertThat(first).isPositive();
            assertThat(fromOtherClient).isGreaterThan(first);
            assertThat(third).isGreaterThan(fromOtherClient);
        });
    }

    @Test
    void aBlankKeyIsRefusedNamingMethodAndExpression() {
        run(context -> assertThatThrownBy(() -> context.getBean(Tokens.class).keyed("  "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Tokens.keyed(String)").hasMessageContaining("\"#id\"").hasMessageContaining("blank"));
    }

    @Test
    void anIsoWaitTimeIsHonoured() {
        run(context -> {
            try (OtherClient other = new OtherClient(server);
                    LockHandle held = other.locks.acquire("busy", LockOptions.tryOnce())) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> context.getBean(Busy.class).isoWait()).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("'busy' within 400ms");
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(390L, 1500L);
            }
        });
    }

    @Test
    void aClassLevelLockExcludesEveryPublicMethodOfTheClass() {
        run(context -> {
            Busy busy = context.getBean(Busy.class);
            assertThat(busy.first()).contains("busy-class");
            try (OtherClient other = new OtherClient(server);
                    LockHandle held = other.locks.acquire("busy-class", LockOptions.tryOnce())) {
                assertThat(busy.first()).isEmpty();
                assertThat(busy.second()).isEmpty();
                assertThat(busy.toString()).as("toString() is not locked by the class-level annotation").isEqualTo("Busy");
            }
        });
    }

    @Test
    void jdkInterfaceProxiesFindTheAnnotationOnTheInterfaceOrTheImplementation() {
        runner().withPropertyValues("spring.aop.proxy-target-class=false").withBean(Shipping.class, ShippingService::new)
                .run(context -> {
                    Shipping shipping = context.getBean(Shipping.class);
                    assertThat(java.lang.reflect.Proxy.isProxyClass(shipping.getClass())).isTrue();
                    assertThat(shipping.onInterface("9")).containsExactly("ship:9");
                    assertThat(shipping.onImplementation("9")).containsExactly("impl:9");
                });
    }

    @Test
    void withAsyncTheLockIsTakenOnTheExecutorThreadAndSkipCompletesWithNull() {
        runner().withUserConfiguration(AsyncConfig.class).run(context -> {
            AsyncReports reports = context.getBean(AsyncReports.class);
            String ran = reports.run().get(10, TimeUnit.SECONDS);
            assertThat(ran).doesNotStartWith(Thread.currentThread().getName() + "|").endsWith("|[async]");
            try (OtherClient other = new OtherClient(server);
                    LockHandle held = other.locks.acquire("async", LockOptions.tryOnce())) {
                assertThat(reports.run().get(10, TimeUnit.SECONDS)).isNull();
            }
        });
    }

    @Test
    void beanReferencesInKeysWorkWhenAllowed() {
        runner().withPropertyValues("redis-lock.allow-bean-references=true", "tenant=acme").withBean(Tenanted.class)
                .run(context -> assertThat(context.getBean(Tenanted.class).keys("7")).containsExactly("acme:7"));
    }

    @Test
    void aMethodOutrunningItsFixedLeaseFailsAtTheReleaseWithLockLostException() {
        run(context -> assertThatThrownBy(() -> context.getBean(Tokens.class).outrunsLease())
                .isInstanceOf(LockLostException.class).hasMessageContaining("'short-lease'")
                .hasMessageContaining("may have been changed by another holder"));
    }

    @Test
    void aLostLockIsPublishedAsAnApplicationEvent() {
        runner().withPropertyValues("redis-lock.lease-time=600ms").withBean(LostLocks.class).run(context -> {
                    BlockingQueue<LockLostEvent> events = context.getBean(LostLocks.class).events;
                    RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
                    LockHandle handle = locks.acquire("doomed", LockOptions.tryOnce());
                    server.command("DEL", "redis-lock:{doomed}");
                    LockLostEvent event = events.poll(5, TimeUnit.SECONDS);
                    assertThat(event).isNotNull();
                    assertThat(event.getKey()).isEqualTo("doomed");
                    assertThat(event.getFencingToken()).isEqualTo(handle.fencingToken());
                    assertThat(handle.isHeld()).isFalse();
                    assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class);
                });
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Another client of the same Redis, as another JVM would be: its own connection and client id. */
    static final class OtherClient implements AutoCloseable {

        private final JedisConnectionFactory factory;
        final RedisLockTemplate locks;

        OtherClient(RedisServerProcess redis) {
            factory = new JedisConnectionFactory(new org.springframework.data.redis.connection.RedisStandaloneConfiguration(
                    redis.host(), redis.port()));
            factory.afterPropertiesSet();
            factory.start();
            locks = new RedisLockTemplate(new StringRedisTemplate(factory));
        }

        @Override
        public void close() {
            locks.close();
            factory.destroy();
        }
    }

    static class Transfers {

        @DistributedLock(key = {"'acct:' + #from", "'acct:' + #to"}, waitTime = "1s")
        public void transfer(String from, String to) {
            pause(1);
        }

        @DistributedLock(key = {"'acct:' + #from", "'acct:' + #to"}, waitTime = "30s")
        public void transferPatiently(String from, String to) {
            pause(1);
        }

        @DistributedLock(key = {"'acct:' + #from", "'acct:' + #to"}, waitTime = "1s")
        public List<String> keysHeld(String from, String to) {
            return new ArrayList<>(LockContext.keys());
        }
    }

    static class Skipping {

        private final AtomicInteger runs = new AtomicInteger();

        public int runs() {
            return runs.get();
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Optional<String> optional() {
            runs.incrementAndGet();
            return Optional.of("ran");
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public List<String> list() {
            runs.incrementAndGet();
            return List.of("ran");
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Set<String> set() {
            runs.incrementAndGet();
            return Set.of("ran");
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Map<String, String> map() {
            runs.incrementAndGet();
            return Map.of("ran", "yes");
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Collection<String> collection() {
            runs.incrementAndGet();
            return List.of("ran");
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Integer boxed() {
            runs.incrementAndGet();
            return 1;
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public CompletableFuture<String> future() {
            runs.incrementAndGet();
            return CompletableFuture.completedFuture("ran");
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public void nothing() {
            runs.incrementAndGet();
        }
    }

    static class Reentrant {

        private Reentrant self;

        @org.springframework.beans.factory.annotation.Autowired
        void setSelf(@org.springframework.context.annotation.Lazy Reentrant self) {
            this.self = self;
        }

        @DistributedLock(key = "'reentrant:' + #id", waitTime = "0s")
        public long[] outer(String id) {
            return new long[] {LockContext.fencingToken(), self.inner(id)};
        }

        @DistributedLock(key = "'reentrant:' + #id", waitTime = "0s")
        public long inner(String id) {
            return LockContext.fencingToken();
        }
    }

    static class Nested {

        private final Tokens tokens;

        Nested(Tokens tokens) {
            this.tokens = tokens;
        }

        @DistributedLock(key = "'nested-outer'")
        public long[] outer() {
            long before = LockContext.fencingToken();
            long inner = tokens.boxed(0L);
            return new long[] {before, inner, LockContext.fencingToken()};
        }
    }

    static class Tokens {

        @DistributedLock(key = "'token'")
        public Long boxed(@FencingToken Long token) {
            return token;
        }

        @DistributedLock(key = "#id")
        public void keyed(String id) {
        }

        @DistributedLock(key = "'short-lease'", leaseTime = "200ms")
        public void outrunsLease() {
            pause(500);
        }
    }

    @DistributedLock(name = "busy-class", waitTime = "0s", onFailure = OnFailure.SKIP)
    static class Busy {

        public Optional<String> first() {
            return Optional.of(String.join(",", LockContext.keys()));
        }

        public Optional<String> second() {
            return Optional.of(String.join(",", LockContext.keys()));
        }

        @Override
        public String toString() {
            return "Busy";
        }

        @DistributedLock(key = "'busy'", waitTime = "PT0.4S")
        public void isoWait() {
        }
    }

    static class LostLocks implements ApplicationListener<LockLostEvent> {

        final BlockingQueue<LockLostEvent> events = new LinkedBlockingQueue<>();

        @Override
        public void onApplicationEvent(LockLostEvent event) {
            events.add(event);
        }
    }

    public interface Shipping {

        @DistributedLock(key = "'ship:' + #id")
        Set<String> onInterface(String id);

        Set<String> onImplementation(String id);
    }

    static class ShippingService implements Shipping {

        @Override
        public Set<String> onInterface(String id) {
            return LockContext.keys();
        }

        @Override
        @DistributedLock(key = "'impl:' + #id")
        public Set<String> onImplementation(String id) {
            return LockContext.keys();
        }
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @org.springframework.scheduling.annotation.EnableAsync
    static class AsyncConfig {

        @org.springframework.context.annotation.Bean
        AsyncReports asyncReports() {
            return new AsyncReports();
        }
    }

    static class AsyncReports {

        @org.springframework.scheduling.annotation.Async
        @DistributedLock(key = "'async'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public CompletableFuture<String> run() {
            return CompletableFuture.completedFuture(Thread.currentThread().getName() + "|" + LockContext.keys());
        }
    }

    static class Tenanted {

        @DistributedLock(key = "@environment.getProperty('tenant') + ':' + #id")
        public Set<String> keys(String id) {
            return LockContext.keys();
        }
    }
}
