package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Await;
import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Redlock with many held locks while one of five masters is frozen (SIGSTOP: its connections stay open, nothing is
 * answered): the watchdog's batched renewals and every release settle once a majority answered, so no lock held on
 * the healthy majority is lost and no release waits for the frozen node. (Before Redlock ran on the shared engine,
 * one thread renewed each lock in turn, waiting for every node: 26 of 30 locks with a 6 s lease were lost within
 * 15 s of one master freezing, and a release took the node timeout.)
 */
@WithRedisNodes(value = 5, freshForEachTest = true)
class RedlockFrozenNodeTest {

    private static final int LOCKS = 1000;

    RedisNodes nodes;
    RedlockClients clients;

    @BeforeEach
    void connect() {
        clients = new RedlockClients(nodes);
    }

    @AfterEach
    void close() {
        nodes.node(4).resume();
        clients.close();
    }

    @Test
    void manyHeldLocksKeepTheirHealthyMajorityAndReleasePromptlyWhileANodeIsFrozen() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        RedlockTemplate template = clients.template(RedisLockConfig.defaults().withWatchdogLease(lease));
        List<String> lost = new CopyOnWriteArrayList<>();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            held.add(template.acquire("frozen:" + i, LockOptions.tryOnce()));
        }
        RedisServerProcess frozen = nodes.node(4);
        frozen.pause();
        long frozenAt = System.nanoTime();
        Thread.sleep(lease.toMillis() * 3 / 2); // one and a half leases: only renewals on the healthy nodes keep them

        long notHeld = held.stream().filter(handle -> !handle.isHeld()).count();
        assertThat(notHeld).as("locks no longer held %s ms after node 4 froze (lost: %s)",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt), lost.stream().limit(3).toList()).isZero();
        assertThat(lost).isEmpty();
        String[] lockKeys = held.stream().map(handle -> "redis-lock:{" + handle.key() + "}").toArray(String[]::new);
        for (int n = 0; n < 4; n++) {
            String[] values = nodes.node(n).command(prepend("MGET", lockKeys)).split("\n", -1);
            long other = java.util.Arrays.stream(values).filter(value -> !value.startsWith(template.clientId())).count();
            assertThat(other).as("locks node %d no longer holds for this client", n).isZero();
        }

        long slowest = 0;
        long start = System.nanoTime();
        for (LockHandle handle : held) {
            long before = System.nanoTime();
            handle.release();
            slowest = Math.max(slowest, System.nanoTime() - before);
        }
        long allMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println(LOCKS + " Redlock releases with one of five nodes frozen took " + allMs + " ms, the slowest "
                + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms");
        // a release waits for a majority, never for the frozen node (the node timeout is 1 s)
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowest)).as("the slowest release, in ms").isLessThan(500);
        // a release returns once a majority deleted its lock; the fourth healthy node's deletes follow
        for (int n = 0; n < 4; n++) {
            RedisServerProcess node = nodes.node(n);
            Await.until(() -> "0".equals(node.command(prepend("EXISTS", lockKeys))), Duration.ofSeconds(5),
                    "no lock left on node " + n);
        }
    }

    private static String[] prepend(String command, String[] args) {
        String[] all = new String[args.length + 1];
        all[0] = command;
        System.arraycopy(args, 0, all, 1, args.length);
        return all;
    }
}
