package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Redlock with nodes killed, restarted empty, or losing the lock; five fresh masters per test. */
@WithRedisNodes(value = 5, freshForEachTest = true)
class RedlockFaultTest {

    private static final String KEY = "orders:42";
    private static final String LOCK_KEY = "redis-lock:{orders:42}";

    RedisNodes nodes;
    RedlockClients clients;

    @BeforeEach
    void connect() {
        clients = new RedlockClients(nodes);
    }

    @AfterEach
    void close() {
        clients.close();
    }

    @Test
    void withTwoOfFiveNodesDownTheLockIsStillAcquiredAndExcludesOthers() {
        RedlockTemplate template = clients.template();
        RedlockTemplate other = clients.template();
        long before = template.execute(KEY, LockOptions.tryOnce(), LockHandle::fencingToken);
        nodes.node(0).kill();
        nodes.node(3).kill();

        try (LockHandle handle = template.acquire(KEY, LockOptions.waitFor(Duration.ofSeconds(5)))) {
            assertThat(handle.fencingToken()).isGreaterThan(before);
            for (int i : new int[] {1, 2, 4}) {
                assertThat(nodes.node(i).command("GET", LOCK_KEY)).startsWith(template.clientId());
            }
            assertThat(other.tryAcquire(KEY, LockOptions.waitFor(Duration.ofMillis(300)))).isEmpty();
        }
        assertThat(other.tryAcquire(KEY, LockOptions.tryOnce())).hasValueSatisfying(LockHandle::release);
    }

    @Test
    void withThreeOfFiveNodesDownNoLockIsGrantedAndTheErrorNamesTheNodesWithinTheWaitTime() {
        RedlockTemplate template = clients.template();
        List<RedisServerProcess> killed = List.of(nodes.node(1), nodes.node(2), nodes.node(4));
        killed.forEach(RedisServerProcess::kill);
        Duration wait = Duration.ofSeconds(2);

        long start = System.nanoTime();
        assertThatThrownBy(() -> template.acquire(KEY, LockOptions.waitFor(wait)))
                .isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining(KEY)
                .hasMessageContaining("a majority of the Redlock nodes could not be reached")
                .hasMessageContaining("a majority is 3")
                .hasMessageContaining("127.0.0.1:" + killed.get(0).port() + " "); // "failed: ..." or "did not answer in time"
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println("3 of 5 Redlock nodes down: refused after " + tookMs + " ms (wait " + wait.toMillis() + " ms)");
        // within the wait time, plus at most the last attempt's shortest reply wait (100 ms) and a loaded machine's slack
        assertThat(tookMs).isBetween(wait.toMillis() - 50, wait.toMillis() + 1000);
        assertThatThrownBy(() -> template.tryAcquire(KEY, LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("could not be reached");
        for (int i : new int[] {0, 3}) {
            // at most the short turn a release keeps for waiting clients ('~turn'), never a lock of this client
            assertThat(String.valueOf(nodes.node(i).command("GET", LOCK_KEY))).as("nothing half-held on a live node")
                    .doesNotStartWith(template.clientId());
        }
        assertThat(template.localLockCount()).isZero();
    }

    @Test
    void aKilledMinorityRestartedEmptyGrantsNoSecondHolderAndTokensStillRise() throws Exception {
        RedisLockConfig config = RedisLockConfig.defaults().withWatchdogLease(Duration.ofSeconds(3));
        RedlockTemplate holder = clients.template(config);
        RedlockTemplate contender = clients.template(config);
        LockHandle held = holder.acquire(KEY, LockOptions.tryOnce());

        nodes.node(0).kill();
        nodes.node(1).kill();
        nodes.node(0).restart(); // no persistence: back empty, without the lock or its fencing counter
        nodes.node(1).restart();
        assertThat(nodes.node(0).command("EXISTS", LOCK_KEY)).isEqualTo("0");

        assertThat(contender.tryAcquire(KEY, LockOptions.waitFor(Duration.ofMillis(500)))).as("no double grant").isEmpty();
        // the watchdog puts the lock back on the restarted nodes within a third of the lease
        awaitOwner(nodes.node(0), holder.clientId(), Duration.ofSeconds(10));
        awaitOwner(nodes.node(1), holder.clientId(), Duration.ofSeconds(10));
        assertThat(held.isHeld()).isTrue();

        // another minority restarts: the holder still has a majority, so still no second holder
        nodes.node(3).kill();
        nodes.node(4).kill();
        nodes.node(3).restart();
        nodes.node(4).restart();
        assertThat(contender.tryAcquire(KEY, LockOptions.waitFor(Duration.ofMillis(500)))).as("no double grant").isEmpty();
        held.release();

        try (LockHandle next = contender.acquire(KEY, LockOptions.waitFor(Duration.ofSeconds(5)))) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void theWatchdogRenewsOnEveryNodeAndReportsTheLockLostWhenAMajorityNoLongerHoldsIt() throws Exception {
        RedlockTemplate template = clients.template(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(900)));
        List<String> lost = new CopyOnWriteArrayList<>();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
        LockHandle handle = template.acquire(KEY, LockOptions.tryOnce());

        Thread.sleep(2000); // more than two leases: only renewals keep it
        assertThat(handle.isHeld()).isTrue();
        for (RedisServerProcess node : nodes.nodes()) {
            assertThat(node.command("GET", LOCK_KEY)).startsWith(template.clientId());
            assertThat(Long.parseLong(node.command("PTTL", LOCK_KEY))).isPositive();
        }

        for (int i = 0; i < 3; i++) {
            nodes.node(i).command("DEL", LOCK_KEY); // gone from a majority (an operator, or restarts)
        }
        awaitLost(lost, Duration.ofSeconds(10));
        assertThat(lost).singleElement().asString().startsWith(KEY + ": the watchdog found it lost")
                .contains("2 of 5 Redis nodes still held it");
        assertThat(handle.isHeld()).isFalse();
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class).hasMessageContaining(KEY)
                .hasMessageContaining("may have been changed by another holder");
        assertThat(template.localLockCount()).isZero();
        assertThat(template.scheduledRenewalCount()).isZero();
    }

    @Test
    void aLockWhoseMajorityOfNodesDiedIsReportedLostWhenItsLeaseRunsOut() throws Exception {
        RedlockTemplate template = clients.template(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(900)));
        List<String> lost = new CopyOnWriteArrayList<>();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
        LockHandle handle = template.acquire(KEY, LockOptions.tryOnce());
        long killedAt = System.nanoTime();
        for (int i = 2; i < 5; i++) {
            nodes.node(i).kill();
        }
        awaitLost(lost, Duration.ofSeconds(10));
        System.out.println("majority of Redlock nodes killed: lock reported lost after "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt) + " ms (lease 900 ms)");
        assertThat(lost).singleElement().asString().contains("could not renew it on a majority");
        assertThat(handle.isHeld()).isFalse();
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class);
    }

    private static void awaitOwner(RedisServerProcess node, String clientId, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!String.valueOf(node.command("GET", LOCK_KEY)).startsWith(clientId) && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertThat(String.valueOf(node.command("GET", LOCK_KEY))).as("lock on restarted node %d", node.port()).startsWith(clientId);
    }

    private static void awaitLost(List<String> lost, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (lost.isEmpty() && System.nanoTime() < end) {
            Thread.sleep(20);
        }
    }
}
