package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;

import io.github.redislock.core.LockLostListener;
import io.github.redislock.core.LockObserver;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.LockType;
import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.RedisLock;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockDiagnostics;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Concurrently;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Fallback;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.MapPropertySource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A plain Spring application (no Spring Boot on the class path): an {@code AnnotationConfigApplicationContext} whose
 * {@code @Configuration} declares the Redis connection, a {@link RedisLockTemplate} and the
 * {@link DistributedLockAdvisor}, against a real redis-server; two such contexts are two instances of the application.
 */
@WithRedis
class PlainSpringApplicationTest {

    static RedisServerProcess server;

    @Test
    void theClassPathHasNoSpringBoot() {
        assertThat(getClass().getClassLoader().getResource("org/springframework/boot/SpringApplication.class")).isNull();
    }

    @Test
    void twoInstancesNeverRunTheLockedMethodAtOnce() {
        try (AnnotationConfigApplicationContext first = start(OneTemplate.class);
                AnnotationConfigApplicationContext second = start(OneTemplate.class)) {
            List<Ledger> instances = List.of(first.getBean(Ledger.class), second.getBean(Ledger.class));
            assertThat(instances).allSatisfy(ledger -> assertThat(AopUtils.isAopProxy(ledger)).isTrue());
            List<Intervals.Interval> sections = new ArrayList<>();
            Concurrently.run(4, 25, thread -> {
                Intervals.Interval section = instances.get(thread % 2).post("acct-1");
                synchronized (sections) {
                    sections.add(section);
                }
            });
            assertThat(sections).hasSize(100);
            assertThat(Intervals.maxConcurrency(sections)).as("critical sections overlapping at once").isEqualTo(1);
        }
    }

    @Test
    void locksNamesWhichOfTwoBackendsAMethodLocksOnAndNoNameTakesThePrimaryOne() {
        try (AnnotationConfigApplicationContext context = start(TwoTemplates.class)) {
            Audit audit = context.getBean(Audit.class);
            assertThat(audit.record("x")).as("keys held during the call")
                    .containsExactly("audit:{audit:x}=1", "redis-lock:{audit:x}=0");
            assertThat(audit.unnamed("y")).containsExactly("audit:{plain:y}=0", "redis-lock:{plain:y}=1");
        }
    }

    @Test
    void noNameTakesTheBackendThatIsNoFallbackWhenThereIsNoPrimaryOne() {
        try (AnnotationConfigApplicationContext context = start(PrimaryAndFallback.class)) {
            assertThat(context.getBean(Audit.class).unnamed("z")).containsExactly("audit:{plain:z}=0", "redis-lock:{plain:z}=1");
        }
    }

    @ParameterizedTest
    @ValueSource(classes = {FairOnAudit.class, ReadOnAudit.class, WriteOnAudit.class, SemaphoreOnAudit.class})
    void fairReadWriteAndSemaphoreMethodsRunOnANamedSecondTemplate(Class<? extends TypedMethod> bean) {
        server.command("FLUSHALL"); // this test's Redis: every key the call finds is the call's
        try (AnnotationConfigApplicationContext context = start(bean, TwoTemplates.class)) {
            assertThat(context.getBean(bean).run()).as("keys under the audit prefix during the call").isNotEmpty()
                    .allSatisfy(key -> assertThat(key).startsWith("audit:{typed}"));
            assertThat(TypedMethod.keys("redis-lock")).as("keys of the primary template").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(classes = {FairOnDecorator.class, ReadOnDecorator.class, WriteOnDecorator.class, SemaphoreOnDecorator.class})
    void fairReadWriteAndSemaphoreMethodsOnABackendThatIsNoRedisLockTemplateStopTheStart(Class<?> bean) {
        assertThatThrownBy(() -> start(bean, WithDecorator.class).close())
                .hasMessageContaining("@DistributedLock on " + bean.getName() + ".run()")
                .hasMessageContaining("needs a RedisLockTemplate")
                .hasMessageContaining("the LockOperations bean 'decorated' is a DecoratedLocks")
                .hasMessageContaining("the LockOperations beans are [redisLockTemplate, decorated]");
    }

    @Test
    void anExclusiveMethodRunsOnABackendThatIsNoRedisLockTemplate() {
        try (AnnotationConfigApplicationContext context = start(ExclusiveOnDecorator.class, WithDecorator.class)) {
            assertThat(context.getBean(ExclusiveOnDecorator.class).run()).containsExactly("decorated:{typed}");
            assertThat(context.getBean(DecoratedLocks.class).acquisitions).isEqualTo(1);
        }
    }

    @Test
    void aNameThatIsNoBackendStopsTheStartListingTheBackends() {
        assertThatThrownBy(() -> start(Misnamed.class, TwoTemplates.class).close())
                .hasMessageContaining("@DistributedLock on " + Misnamed.class.getName() + ".run()")
                .hasMessageContaining("locks = \"auditLock\" names no bean")
                .hasMessageContaining("the LockOperations beans are [redisLockTemplate, auditLocks]");
    }

    @Test
    void noNameWithTwoBackendsAndNoPrimaryStopsTheStart() {
        assertThatThrownBy(() -> start(Unnamed.class, TwoEqualTemplates.class).close())
                .hasMessageContaining("@DistributedLock on " + Unnamed.class.getName() + ".run()")
                .hasMessageContaining("there are 2 LockOperations beans [first, second] and none is @Primary");
    }

    @Test
    void noBackendAtAllStopsTheStart() {
        assertThatThrownBy(() -> start(Unnamed.class).close())
                .hasMessageContaining("@DistributedLock on " + Unnamed.class.getName() + ".run() needs a LockOperations bean");
    }

    private static AnnotationConfigApplicationContext start(Class<?>... configuration) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("redis",
                Map.of("redis.host", server.host(), "redis.port", server.port(), "ledger.wait", "60s")));
        context.register(Redis.class);
        context.register(configuration);
        context.refresh();
        return context;
    }

    /** What a plain Spring application declares to use {@code @DistributedLock}, besides its lock backends. */
    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy
    static class Redis {

        @Bean
        JedisConnectionFactory redisConnectionFactory(@Value("${redis.host}") String host, @Value("${redis.port}") int port) {
            return new JedisConnectionFactory(new RedisStandaloneConfiguration(host, port));
        }

        @Bean
        StringRedisTemplate stringRedisTemplate(RedisConnectionFactory connectionFactory) {
            return new StringRedisTemplate(connectionFactory);
        }

        @Bean
        static DistributedLockAdvisor distributedLockAdvisor(ConfigurableListableBeanFactory beanFactory) {
            return new DistributedLockAdvisor(beanFactory);
        }

        @Bean
        static DistributedLockValidator distributedLockValidator(ConfigurableListableBeanFactory beanFactory,
                DistributedLockAdvisor advisor) {
            return new DistributedLockValidator(beanFactory, advisor);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OneTemplate {

        @Bean
        RedisLockTemplate redisLockTemplate(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis);
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoTemplates {

        @Bean
        @Primary
        RedisLockTemplate redisLockTemplate(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis);
        }

        @Bean
        RedisLockTemplate auditLocks(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis, RedisLockConfig.defaults().withKeyPrefix("audit"));
        }

        @Bean
        Audit audit() {
            return new Audit();
        }
    }

    /** As the Redlock auto-configuration declares its template: a fallback, next to the application's. */
    @Configuration(proxyBeanMethods = false)
    static class PrimaryAndFallback {

        @Bean
        @Fallback
        RedisLockTemplate auditLocks(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis, RedisLockConfig.defaults().withKeyPrefix("audit"));
        }

        @Bean
        RedisLockTemplate redisLockTemplate(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis);
        }

        @Bean
        Audit audit() {
            return new Audit();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoEqualTemplates {

        @Bean
        RedisLockTemplate first(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis);
        }

        @Bean
        RedisLockTemplate second(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis, RedisLockConfig.defaults().withKeyPrefix("second"));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WithDecorator {

        @Bean
        RedisLockTemplate redisLockTemplate(StringRedisTemplate redis) {
            return new RedisLockTemplate(redis);
        }

        @Bean
        DecoratedLocks decorated(StringRedisTemplate redis) {
            return new DecoratedLocks(new RedisLockTemplate(redis, RedisLockConfig.defaults().withKeyPrefix("decorated")));
        }
    }

    public static class Ledger {

        /** Records when the critical section was entered and left. */
        @DistributedLock(key = "'ledger:' + #account", waitTime = "${ledger.wait}")
        public Intervals.Interval post(String account) throws InterruptedException {
            long enter = System.nanoTime();
            Thread.sleep(2);
            return new Intervals.Interval(enter, System.nanoTime());
        }
    }

    public static class Audit {

        @DistributedLock(key = "'audit:' + #id", locks = "auditLocks")
        public List<String> record(String id) {
            return exist("audit:{audit:" + id + "}", "redis-lock:{audit:" + id + "}");
        }

        @DistributedLock(key = "'plain:' + #id")
        public List<String> unnamed(String id) {
            return exist("audit:{plain:" + id + "}", "redis-lock:{plain:" + id + "}");
        }

        private static List<String> exist(String... keys) {
            return java.util.Arrays.stream(keys).map(key -> key + "=" + server.command("EXISTS", key)).toList();
        }
    }

    /** A method of one lock type; returns the Redis keys under {@code audit:{typed}} or {@code decorated:{typed}} while it runs. */
    public abstract static class TypedMethod {

        public abstract List<String> run();

        static List<String> keys(String prefix) {
            String reply = server.command("KEYS", prefix + ":{typed}*");
            return reply.isBlank() ? List.of() : List.of(reply.split("\n"));
        }
    }

    public static class FairOnAudit extends TypedMethod {
        @Override
        @DistributedLock(key = "'typed'", type = LockType.FAIR, locks = "auditLocks")
        public List<String> run() {
            return keys("audit");
        }
    }

    public static class ReadOnAudit extends TypedMethod {
        @Override
        @DistributedLock(key = "'typed'", type = LockType.READ, locks = "auditLocks")
        public List<String> run() {
            return keys("audit");
        }
    }

    public static class WriteOnAudit extends TypedMethod {
        @Override
        @DistributedLock(key = "'typed'", type = LockType.WRITE, locks = "auditLocks")
        public List<String> run() {
            return keys("audit");
        }
    }

    public static class SemaphoreOnAudit extends TypedMethod {
        @Override
        @DistributedLock(key = "'typed'", permits = 2, locks = "auditLocks")
        public List<String> run() {
            return keys("audit");
        }
    }

    public static class FairOnDecorator {
        @DistributedLock(key = "'typed'", type = LockType.FAIR, locks = "decorated")
        public void run() {
        }
    }

    public static class ReadOnDecorator {
        @DistributedLock(key = "'typed'", type = LockType.READ, locks = "decorated")
        public void run() {
        }
    }

    public static class WriteOnDecorator {
        @DistributedLock(key = "'typed'", type = LockType.WRITE, locks = "decorated")
        public void run() {
        }
    }

    public static class SemaphoreOnDecorator {
        @DistributedLock(key = "'typed'", type = LockType.SEMAPHORE, permits = 3, locks = "decorated")
        public void run() {
        }
    }

    public static class ExclusiveOnDecorator {
        @DistributedLock(key = "'typed'", locks = "decorated")
        public List<String> run() {
            return TypedMethod.keys("decorated").stream().filter(key -> !key.endsWith(":fence")).toList();
        }
    }

    public static class Misnamed {
        @DistributedLock(key = "'k'", locks = "auditLock")
        public void run() {
        }
    }

    public static class Unnamed {
        @DistributedLock(key = "'k'")
        public void run() {
        }
    }

    /** A backend that is a {@link LockOperations} but no {@link RedisLockTemplate}: a decorator counting acquisitions. */
    public static final class DecoratedLocks implements LockOperations {

        private final LockOperations delegate;
        volatile int acquisitions;

        DecoratedLocks(LockOperations delegate) {
            this.delegate = delegate;
        }

        @Override
        public RedisLock lock(String key) {
            return delegate.lock(key);
        }

        @Override
        public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options) {
            acquisitions++;
            return delegate.acquireAll(keys, options);
        }

        @Override
        public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options) {
            acquisitions++;
            return delegate.tryAcquireAll(keys, options);
        }

        @Override
        public Executor asyncExecutor() {
            return delegate.asyncExecutor();
        }

        @Override
        public void addLockLostListener(LockLostListener listener) {
            delegate.addLockLostListener(listener);
        }

        @Override
        public void addObserver(LockObserver observer) {
            delegate.addObserver(observer);
        }

        @Override
        public RedisLockDiagnostics diagnostics() {
            return delegate.diagnostics();
        }

        @Override
        public RedisLockConfig config() {
            return delegate.config();
        }

        @Override
        public String clientId() {
            return delegate.clientId();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
