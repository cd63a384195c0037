package io.github.redislock.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The fair lock's arrival-order check on hand-written snapshots of the lock's owner and queue. */
class FairQueueMonitorTest {

    private static FairQueueMonitor.Snapshot snapshot(String owner, Object... waitersAndArrivals) {
        Map<String, Double> queue = new LinkedHashMap<>();
        for (int i = 0; i < waitersAndArrivals.length; i += 2) {
            queue.put((String) waitersAndArrivals[i], ((Number) waitersAndArrivals[i + 1]).doubleValue());
        }
        return new FairQueueMonitor.Snapshot(owner, queue);
    }

    @Test
    void grantsInArrivalOrderPass() {
        FairQueueMonitor.Order order = new FairQueueMonitor.Order();
        order.observe(snapshot("c1:1:1", "c2:1:1", 100, "c3:1:1", 200));
        order.observe(snapshot("c2:1:1", "c2:1:1", 100, "c3:1:1", 200)); // handed over, not yet confirmed
        order.observe(snapshot("c2:1:1", "c3:1:1", 200, "c1:1:2", 300));
        order.observe(snapshot("c3:1:1", "c1:1:2", 300));
        order.observe(snapshot("c1:1:2"));
        FairQueueMonitor.Order.Result result = order.result();
        assertThat(result.snapshots()).isEqualTo(5);
        assertThat(result.grants()).isEqualTo(4);
        assertThat(result.checked()).isEqualTo(3); // c1:1:1 was never seen queued
        assertThat(result.outOfOrder()).isZero();
    }

    @Test
    void aGrantOvertakingAnEarlierArrivalIsCaught() {
        FairQueueMonitor.Order order = new FairQueueMonitor.Order();
        order.observe(snapshot("c1:1:1", "c2:1:1", 100, "c3:1:1", 200));
        order.observe(snapshot("c3:1:1", "c2:1:1", 100)); // c2 arrived first and still waits
        order.observe(snapshot("c3:1:1", "c2:1:1", 100)); // the same grant seen twice counts once
        FairQueueMonitor.Order.Result result = order.result();
        assertThat(result.outOfOrder()).isEqualTo(1);
        assertThat(result.examples()).singleElement().asString().contains("c3:1:1", "c2:1:1");
    }

    @Test
    void aWaiterThatQueuedAgainIsJudgedByItsNewArrival() {
        // c2 was dropped (stalled past its entry's life) and queued again after c3: c3 going first is fair
        FairQueueMonitor.Order order = new FairQueueMonitor.Order();
        order.observe(snapshot("c1:1:1", "c2:1:1", 100, "c3:1:1", 200));
        order.observe(snapshot("c1:1:1", "c3:1:1", 200, "c2:1:1", 250));
        order.observe(snapshot("c3:1:1", "c2:1:1", 250));
        assertThat(order.result().outOfOrder()).isZero();
    }
}
