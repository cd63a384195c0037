package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** The metric name and {@code holdAtLeast} of an annotated method, as resolved and checked at start-up. */
class LockOperationNameAndHoldTest {

    static class OrderService {

        @DistributedLock(key = "#id")
        public void pay(long id) {
        }

        @DistributedLock(name = "orders", key = "#id")
        public void ship(long id) {
        }

        @DistributedLock(name = "report", waitTime = "0s", onFailure = OnFailure.SKIP, holdAtLeast = "5s")
        public void report() {
        }

        @DistributedLock(name = "report", leaseTime = "2s", holdAtLeast = "5s")
        public void reportLongerThanLease() {
        }

        @DistributedLock(name = "report", type = LockType.FAIR, holdAtLeast = "5s")
        public void reportFair() {
        }

        @DistributedLock(name = "report", permits = 2, holdAtLeast = "5s")
        public void reportSemaphore() {
        }

        @DistributedLock(name = "report", holdAtLeast = "soon")
        public void reportUnparseable() {
        }
    }

    private static DistributedLockOperation resolve(String name) {
        Method method = Arrays.stream(OrderService.class.getMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
        DistributedLock lock = method.getAnnotation(DistributedLock.class);
        return new DistributedLockOperationParser(new LockKeyExpressions(null)).parse(method, OrderService.class, lock,
                lock.waitTime(), lock.leaseTime(), lock.holdAtLeast());
    }

    @Test
    void theMetricNameIsTheAnnotationsNameElseTheMethodNeverTheKey() {
        assertThat(resolve("pay").options.name()).isEqualTo("OrderService.pay");
        assertThat(resolve("ship").options.name()).isEqualTo("orders");
    }

    @Test
    void holdAtLeastBecomesTheOptionsMinimumHold() {
        assertThat(resolve("report").options.holdAtLeast()).isEqualTo(Duration.ofSeconds(5));
        assertThat(resolve("pay").options.holdAtLeast()).isNull();
    }

    @Test
    void holdAtLeastLongerThanTheLeaseIsRefusedAtStartUpNamingTheMethod() {
        assertThatIllegalStateException().isThrownBy(() -> resolve("reportLongerThanLease"))
                .withMessage("@DistributedLock on " + OrderService.class.getName() + ".reportLongerThanLease(): "
                        + "holdAtLeast = \"5s\" is longer than leaseTime = \"2s\": the lock cannot stay held longer than its "
                        + "lease; raise leaseTime or lower holdAtLeast");
    }

    @Test
    void holdAtLeastOnAFairLockOrASemaphoreIsRefusedAtStartUp() {
        assertThatIllegalStateException().isThrownBy(() -> resolve("reportFair"))
                .withMessageContaining("reportFair()").withMessageContaining("holdAtLeast works with the exclusive lock only, not with type = FAIR");
        assertThatIllegalStateException().isThrownBy(() -> resolve("reportSemaphore"))
                .withMessageContaining("reportSemaphore()").withMessageContaining("not with a semaphore (permits = 2)");
    }

    @Test
    void anUnparseableHoldAtLeastIsRefusedAtStartUpNamingTheAttribute() {
        assertThatIllegalStateException().isThrownBy(() -> resolve("reportUnparseable"))
                .withMessageContaining("reportUnparseable()").withMessageContaining("holdAtLeast");
    }
}
