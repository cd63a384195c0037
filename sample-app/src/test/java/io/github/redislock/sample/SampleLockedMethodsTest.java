package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import io.github.redislock.core.LockOperations;
import io.github.redislock.testing.DistributedLockAssert;
import io.github.redislock.testing.LockTestSupport;
import io.github.redislock.testing.LockTestSupport.HeldElsewhere;
import io.github.redislock.testing.TestRedisServer;
import io.github.redislock.testing.WithRedisServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The sample's locked methods, tested as a user tests theirs with redis-lock-test: a real Redis without Docker
 * ({@link WithRedisServer}), {@link DistributedLockAssert} and {@link LockTestSupport#holdElsewhere}.
 */
// a key prefix of its own: the Redis is shared by the test classes of this JVM, and the instances that
// SampleApplicationTest boots take the report job's lock too
@SpringBootTest(properties = {"sample.start-redis=false", "sample.report-job.cron=-", "sample.report-job.work-millis=10",
        "sample.report-job.hold-at-least=100ms", "redis-lock.key-prefix=sample-locked-methods-test"})
@WithRedisServer
class SampleLockedMethodsTest {

    @Autowired
    InventoryService inventory;
    @Autowired
    LedgerService ledger;
    @Autowired
    ReportJob reportJob;
    @Autowired
    LockOperations locks;

    TestRedisServer redis;

    @Test
    void aLockedPurchaseRunsUnderTheItemsLock() throws Throwable {
        inventory.restock("locked-test-item", 5);

        DistributedLockAssert.assertRunsUnderLock(locks, "flash-sale:locked-test-item",
                () -> inventory.buyWithLock("locked-test-item"));
    }

    @Test
    void theAssertionFailsForThePurchaseThatTakesNoLock() {
        inventory.restock("unlocked-test-item", 5);

        assertThatThrownBy(() -> DistributedLockAssert.assertRunsUnderLock(locks, "flash-sale:unlocked-test-item",
                () -> inventory.buyWithoutLock("unlocked-test-item")))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Expected the code to run under the distributed lock 'flash-sale:unlocked-test-item'")
                .hasMessageContaining("it took no lock");
    }

    @Test
    void aDepositRunsUnderTheAccountsLock() throws Throwable {
        DistributedLockAssert.assertRunsUnderLock(locks, "account:test-alice", () -> ledger.deposit("test-alice", 10, 0));
    }

    @Test
    void theReportJobSkipsItsRunWhileAnotherInstanceHoldsItsLock() throws Exception {
        List<String> before = reportJob.recentRuns();
        try (HeldElsewhere otherInstance = LockTestSupport.holdElsewhere(locks, "sample:report-job")) {
            reportJob.run(); // onFailure = SKIP
            assertThat(reportJob.recentRuns()).isEqualTo(before);
        }
        reportJob.run();
        assertThat(reportJob.recentRuns()).first().isNotIn(before); // each run is recorded with its instant
        assertThat(redis.command("LINDEX", ReportJob.RUNS_KEY, "0")).isEqualTo(reportJob.recentRuns().get(0));
    }
}
