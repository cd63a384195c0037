package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The watchdog's per-node queues (pure logic, no Redis): capped per node, queued beyond, never waiting on each other. */
class NodeLanesTest {

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    @Test
    void aStuckNodeQueuesItsOwnTasksBeyondItsCapAndHoldsUpNoOtherNode() throws Exception {
        NodeLanes lanes = new NodeLanes(threads, 4, 2);
        CountDownLatch frozen = new CountDownLatch(1);
        CountDownLatch stuckRunning = new CountDownLatch(2);
        List<String> ran = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 5; i++) {
            int task = i;
            lanes.submit("frozen:1", () -> {
                stuckRunning.countDown();
                await(frozen);
                ran.add("frozen-" + task);
            });
        }
        assertThat(stuckRunning.await(10, TimeUnit.SECONDS)).as("two of the frozen node's tasks running").isTrue();
        assertThat(lanes.queued("frozen:1")).as("the frozen node's tasks beyond its cap, queued").isEqualTo(3);

        CountDownLatch healthyDone = new CountDownLatch(10);
        for (int i = 0; i < 10; i++) {
            lanes.submit("healthy:2", healthyDone::countDown);
        }
        assertThat(healthyDone.await(10, TimeUnit.SECONDS)).as("every task of a healthy node ran meanwhile").isTrue();
        assertThat(ran).as("frozen tasks done while frozen").isEmpty();

        frozen.countDown();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ran.size() < 5 && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(ran).as("queued tasks run once the node answers, none dropped").hasSize(5);
        assertThat(lanes.queued("frozen:1")).isZero();

        lanes.close();
        assertThatThrownBy(() -> lanes.submit("healthy:2", () -> { })).isInstanceOf(RejectedExecutionException.class);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
