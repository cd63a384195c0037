package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.FencingToken;
import io.github.redislock.core.LockType;
import io.github.redislock.annotation.OnFailure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** A broken annotation stops the application at start-up, naming class, method and what is wrong. */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockStartupTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    RedisLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=1");

    static Stream<Arguments> brokenAnnotations() {
        return Stream.of(
                Arguments.of(BadDuration.class, "BadDuration.run()", "waitTime = \"two seconds\" is not a duration"),
                Arguments.of(FairType.class, "FairType.run()", "type = FAIR takes one key, but there are 2"),
                Arguments.of(SkipPrimitive.class, "SkipPrimitive.count()", "onFailure = SKIP cannot return a value of primitive type int"),
                Arguments.of(TypeReference.class, "TypeReference.run(String)", "\"T(java.lang.Runtime).getRuntime()\" uses a type reference"),
                Arguments.of(Constructor.class, "Constructor.run(String)", "\"new java.io.File(#p0)\" calls a constructor"),
                Arguments.of(BeanReference.class, "BeanReference.run()", "set redis-lock.allow-bean-references=true"),
                Arguments.of(BadFencingParameter.class, "BadFencingParameter.run(String, int)", "must be long or Long"),
                Arguments.of(UnresolvablePlaceholder.class, "UnresolvablePlaceholder.run()", "missing.wait"),
                Arguments.of(Reactive.class, "Reactive.run()", "a reactive type other than Mono, Flux or Publisher; declare one of those"),
                Arguments.of(OtherStage.class, "OtherStage.run()", "a CompletionStage the lock cannot hand back; declare CompletableFuture or CompletionStage"),
                Arguments.of(RootTarget.class, "RootTarget.run()", "key expression \"'job:' + #root.target\" reads #root.target"),
                Arguments.of(ParameterWithoutText.class, "ParameterWithoutText.run(Customer)", "key expression \"#customer\" is a "
                        + "parameter of type " + Customer.class.getName() + ", and " + Customer.class.getName()
                        + " does not override toString()"),
                Arguments.of(Assignment.class, "Assignment.run(String)", "key expression \"#p0 = 'x'\" assigns a value"),
                Arguments.of(UnknownBackend.class, "UnknownBackend.run()", "locks = \"ordersLocks\" names no bean; the "
                        + "LockOperations beans are [redisLockTemplate]"),
                Arguments.of(BackendOfAnotherType.class, "BackendOfAnotherType.run()", "locks = \"environment\" names a bean of "
                        + "type"));
    }

    @ParameterizedTest
    @MethodSource("brokenAnnotations")
    void aBrokenAnnotationStopsTheApplication(Class<?> bean, String method, String problem) {
        runner.withBean(bean).run(context -> assertThat(context).getFailure()
                .hasMessageContaining(bean.getName().replace(bean.getSimpleName(), "") + method)
                .hasMessageContaining(problem));
    }

    @Test
    void beanReferencesWorkWhenAllowed() {
        runner.withBean(BeanReference.class).withPropertyValues("redis-lock.allow-bean-references=true")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aMethodAProxyCannotInterceptIsReportedWithAWarning(CapturedOutput output) {
        runner.withBean(Unproxyable.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(output).contains("@DistributedLock on " + Unproxyable.class.getName() + ".secret() has no effect")
                    .contains("a proxy cannot intercept a private method")
                    .contains(Unproxyable.class.getName() + ".sealed() has no effect")
                    .contains(Unproxyable.class.getName() + ".shared() has no effect")
                    .contains("a proxy cannot intercept a static method");
        });
    }

    @Test
    void aPublicFinalMethodUnderAClassLevelAnnotationIsReportedWithAWarning(CapturedOutput output) {
        runner.withBean(ClassLevelWithFinal.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(output).contains("@DistributedLock on " + ClassLevelWithFinal.class.getName() + ".sealed() has no effect")
                    .doesNotContain(ClassLevelWithFinal.class.getName() + ".open() has no effect");
        });
    }

    @Test
    void annotatedMethodsWithoutAnyAutoProxyCreatorAreReportedWithAWarning(CapturedOutput output) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=1").withBean(ClassLevelWithFinal.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).contains("no auto-proxy creator is registered, so none of them is locked");
                });
    }

    @Test
    void annotatedMethodsWithoutRedisStopTheApplicationSayingWhatIsMissing() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RedisLockAutoConfiguration.class))
                .withBean(Fine.class).run(context -> assertThat(context).getFailure()
                        .hasMessageContaining("Fine.run() needs a LockOperations bean").hasMessageContaining("RedisConnectionFactory"));
    }

    @Test
    void noWarningWhenEveryAnnotatedMethodCanBeProxied(CapturedOutput output) {
        runner.withBean(Fine.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(output).doesNotContain("has no effect").doesNotContain("no auto-proxy creator");
        });
    }

    @DistributedLock(name = "class-level")
    public static class ClassLevelWithFinal {
        public void open() {
        }

        public final void sealed() {
        }
    }

    public static class Fine {
        @DistributedLock(key = "'k'")
        public void run() {
        }
    }

    static class UnknownBackend {
        @DistributedLock(key = "'k'", locks = "ordersLocks")
        public void run() {
        }
    }

    static class BackendOfAnotherType {
        @DistributedLock(key = "'k'", locks = "environment")
        public void run() {
        }
    }

    static class BadDuration {
        @DistributedLock(key = "'k'", waitTime = "two seconds")
        public void run() {
        }
    }

    static class FairType {
        @DistributedLock(key = {"'a'", "'b'"}, type = LockType.FAIR)
        public void run() {
        }
    }

    static class SkipPrimitive {
        @DistributedLock(key = "'k'", onFailure = OnFailure.SKIP)
        public int count() {
            return 1;
        }
    }

    static class TypeReference {
        @DistributedLock(key = "T(java.lang.Runtime).getRuntime()")
        public void run(String id) {
        }
    }

    static class Constructor {
        @DistributedLock(key = "new java.io.File(#p0)")
        public void run(String id) {
        }
    }

    static class BeanReference {
        @DistributedLock(key = "@environment.getProperty('tenant')")
        public void run() {
        }
    }

    static class BadFencingParameter {
        @DistributedLock(key = "#id")
        public void run(String id, @FencingToken int token) {
        }
    }

    interface OwnPublisher extends org.reactivestreams.Publisher<String> {
    }

    static class Reactive {
        @DistributedLock(key = "'k'")
        public OwnPublisher run() {
            return null;
        }
    }

    abstract static class OwnStage implements java.util.concurrent.CompletionStage<String> {
    }

    static class OtherStage {
        @DistributedLock(key = "'k'")
        public OwnStage run() {
            return null;
        }
    }

    static class RootTarget {
        @DistributedLock(key = "'job:' + #root.target")
        public void run() {
        }
    }

    static final class Customer {
    }

    static class ParameterWithoutText {
        @DistributedLock(key = "#customer")
        public void run(Customer customer) {
        }
    }

    static class Assignment {
        @DistributedLock(key = "#p0 = 'x'")
        public void run(String id) {
        }
    }

    static class UnresolvablePlaceholder {
        @DistributedLock(key = "'k'", waitTime = "${missing.wait}")
        public void run() {
        }
    }

    static class Unproxyable {
        @DistributedLock(key = "'k'")
        private void secret() {
        }

        @DistributedLock(key = "'k'")
        public final void sealed() {
        }

        @DistributedLock(key = "'k'")
        public static void shared() {
        }

        void use() {
            secret();
        }
    }
}
