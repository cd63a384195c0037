package io.github.redislock.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import redis.clients.jedis.Jedis;

/**
 * Watches a fair lock's queue in Redis and checks that the lock goes to waiters in the order they arrived.
 * <p>
 * Every couple of milliseconds one script reads, atomically, the lock's owner and the queue (waiter id by arrival
 * score, strictly increasing, set once when the waiter joins). An owner whose arrival was seen in an earlier
 * snapshot must have no queued waiter with an earlier arrival: that waiter was queued, and live, when the owner was
 * granted. Why that is proof: a waiter's score is only ever set when it joins, so an entry still showing an
 * earlier score was in the queue continuously since before the owner joined; an entry gone stale (its waiter dead
 * or stalled) is dropped by the very script that grants, so it cannot be in the queue beside a later grant either.
 * A waiter dropped and queued again gets a later score; if the monitor missed that, it uses the earlier one it saw,
 * which can only hide an inversion, never invent one. Owners never seen waiting (they found the lock free with
 * nobody queued) are not checked.
 */
final class FairQueueMonitor implements AutoCloseable {

    /** Reads the owner ('' when free) and the queue with scores, in one step. */
    private static final String SNAPSHOT = "return {redis.call('GET', KEYS[1]) or '', redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')}";

    private final Order order = new Order();
    private final Jedis jedis;
    private final String lockKey;
    private final String queueKey;
    private final Thread poller;
    private volatile boolean running = true;
    private volatile Snapshot latest = new Snapshot("", Map.of());

    /** One atomic look at the lock: its owner ('' when free) and its queue, waiter id to arrival score, by arrival. */
    record Snapshot(String owner, Map<String, Double> queue) {
    }

    /**
     * @param lockKey the lock's Redis key, e.g. {@code redis-lock:{chaos}}; its queue is {@code lockKey:queue}
     */
    FairQueueMonitor(int redisPort, String lockKey) {
        this.jedis = new Jedis("127.0.0.1", redisPort);
        this.lockKey = lockKey;
        this.queueKey = lockKey + ":queue";
        this.poller = new Thread(this::poll, "fair-queue-monitor");
        poller.setDaemon(true);
        poller.start();
    }

    private void poll() {
        while (running) {
            try {
                Snapshot snapshot = snapshot();
                latest = snapshot;
                order.observe(snapshot);
            } catch (RuntimeException e) {
                if (running) {
                    System.out.println("fair queue monitor: " + e); // Redis busy or restarting: look again
                }
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private Snapshot snapshot() {
        List<?> reply = (List<?>) jedis.eval(SNAPSHOT, List.of(lockKey, queueKey), List.of());
        List<?> flat = (List<?>) reply.get(1);
        Map<String, Double> queue = new LinkedHashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            queue.put(String.valueOf(flat.get(i)), Double.parseDouble(String.valueOf(flat.get(i + 1))));
        }
        return new Snapshot(String.valueOf(reply.get(0)), queue);
    }

    /** The most recent snapshot. */
    Snapshot latest() {
        return latest;
    }

    /** What the monitor saw so far. */
    Order.Result result() {
        return order.result();
    }

    @Override
    public void close() {
        running = false;
        try {
            poller.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        jedis.close();
    }

    /** The pure logic: fed snapshots in the order they were taken, it finds grants that overtook an earlier arrival. */
    static final class Order {

        /**
         * @param snapshots snapshots taken
         * @param grants distinct owners seen holding the lock
         * @param checked of those, the ones whose arrival in the queue was seen, so their grant could be checked
         * @param outOfOrder owners granted while a waiter that arrived before them was still queued
         * @param examples a few of those, for the report
         */
        record Result(long snapshots, int grants, int checked, int outOfOrder, List<String> examples) {
        }

        private final Map<String, Double> arrival = new HashMap<>();
        private final Set<String> owners = new HashSet<>();
        private final Set<String> checkedOwners = new HashSet<>();
        private final Set<String> overtaking = new HashSet<>();
        private final List<String> examples = new ArrayList<>();
        private long snapshots;

        synchronized void observe(Snapshot snapshot) {
            snapshots++;
            arrival.putAll(snapshot.queue());
            String owner = snapshot.owner();
            if (owner.isEmpty()) {
                return;
            }
            owners.add(owner);
            Double ownerArrival = arrival.get(owner);
            if (ownerArrival == null) {
                return;
            }
            checkedOwners.add(owner);
            for (Map.Entry<String, Double> waiter : snapshot.queue().entrySet()) {
                if (!waiter.getKey().equals(owner) && waiter.getValue() < ownerArrival && overtaking.add(owner)
                        && examples.size() < 5) {
                    examples.add(owner + " (arrived " + ownerArrival.longValue() + ") holds while " + waiter.getKey()
                            + " (arrived " + waiter.getValue().longValue() + ") waits");
                }
            }
        }

        synchronized Result result() {
            return new Result(snapshots, owners.size(), checkedOwners.size(), overtaking.size(),
                    Collections.unmodifiableList(new ArrayList<>(examples)));
        }
    }
}
