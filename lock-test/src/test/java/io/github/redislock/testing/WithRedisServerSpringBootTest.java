package io.github.redislock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.OnFailure;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.LockOptions;
import io.github.redislock.testing.LockTestSupport.HeldElsewhere;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The test support as a user's Spring Boot test uses it. */
@SpringBootTest(classes = WithRedisServerSpringBootTest.App.class)
@WithRedisServer
class WithRedisServerSpringBootTest {

    @Autowired
    Orders orders;
    @Autowired
    LockOperations locks;
    @Autowired
    StringRedisTemplate redis;
    @Autowired
    TestRedisServer serverBean;

    TestRedisServer server;

    @Test
    void theApplicationTalksToTheStartedServer() {
        redis.opsForValue().set("with-redis-server", "yes");

        assertThat(server.command("GET", "with-redis-server")).isEqualTo("yes");
        assertThat(serverBean).isSameAs(server);
        assertThat(server.port()).isNotEqualTo(6379);
    }

    @Test
    void aLockedMethodRunsUnderItsLock() throws Throwable {
        DistributedLockAssert.assertRunsUnderLock(locks, "order:42", () -> orders.pay(42));
    }

    @Test
    void theAssertionFailsForAMethodThatIsNotLocked() {
        assertThatThrownBy(() -> DistributedLockAssert.assertRunsUnderLock(locks, "order:42", () -> orders.refund(42)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Expected the code to run under the distributed lock 'order:42', but it took no lock");
    }

    @Test
    void theAssertionFailsForAMethodLockedOnAnotherKey() {
        assertThatThrownBy(() -> DistributedLockAssert.assertRunsUnderLock(locks, "order:42", () -> orders.pay(7)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("only the locks [order:7]");
    }

    @Test
    void codeInsideALockedMethodCanAssertItsLock() {
        orders.payAndCheck(42, () -> {
            DistributedLockAssert.assertLocked();
            DistributedLockAssert.assertLocked("order:42");
            DistributedLockAssert.assertLocked(locks, "order:42");
        });
        assertThatThrownBy(() -> orders.payAndCheck(42, () -> DistributedLockAssert.assertLocked("order:7")))
                .isInstanceOf(AssertionError.class).hasMessageContaining("holds [order:42]");
        assertThatThrownBy(DistributedLockAssert::assertLocked).isInstanceOf(AssertionError.class);
        assertThatThrownBy(() -> DistributedLockAssert.assertLocked(locks, "order:42")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("holds none");
    }

    @Test
    void aLockHeldElsewhereMakesTheLockedMethodFailAsItsOnFailureSays() {
        try (HeldElsewhere held = LockTestSupport.holdElsewhere(locks, "order:42")) {
            assertThatThrownBy(() -> orders.pay(42)).isInstanceOf(LockNotAcquiredException.class);
            assertThat(orders.payIfFree(42)).isNull(); // SKIP: not run
            assertThat(held.fencingToken()).isPositive();
        }
        assertThat(orders.payIfFree(42)).isTrue();
        assertThat(locks.tryAcquire("order:42", LockOptions.tryOnce())).hasValueSatisfying(handle -> handle.release());
    }

    @SpringBootApplication
    static class App {

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    static class Orders {

        @DistributedLock(key = "'order:' + #id", waitTime = "100ms")
        public void pay(long id) {
        }

        @DistributedLock(key = "'order:' + #id", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Boolean payIfFree(long id) {
            return true;
        }

        @DistributedLock(key = "'order:' + #id", waitTime = "100ms")
        public void payAndCheck(long id, Runnable check) {
            check.run();
        }

        public void refund(long id) {
        }
    }
}
