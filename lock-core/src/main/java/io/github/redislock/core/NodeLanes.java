package io.github.redislock.core;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the watchdog's renewals in one lane per Redis node (a Cluster master, or the one Redis): at most a lane's cap of
 * its tasks run at once, the others wait in the lane's queue, in order, and run as soon as one of its tasks ends. A
 * task is never dropped for want of a thread, and a lane whose node is slow or frozen holds up only its own queue:
 * the threads come from a pool with no bound of its own, so the threads in use are at most the sum of the caps of the
 * lanes that have work.
 */
final class NodeLanes {

    private static final Logger log = LoggerFactory.getLogger(NodeLanes.class);

    private final ExecutorService threads;
    /** The lane of tasks with no node ({@code null}): one Redis, or a Cluster master not known yet. */
    private final int defaultCap;
    private final int nodeCap;
    /** The lanes with tasks running or queued; guarded by {@code this}. */
    private final Map<String, Lane> lanes = new HashMap<>();
    private boolean closed;

    NodeLanes(ExecutorService threads, int defaultCap, int nodeCap) {
        this.threads = threads;
        this.defaultCap = defaultCap;
        this.nodeCap = nodeCap;
    }

    private static final class Lane {

        final String node;
        final ArrayDeque<Runnable> queued = new ArrayDeque<>();
        int running;

        Lane(String node) {
            this.node = node;
        }
    }

    /**
     * Runs {@code task} in {@code node}'s lane ({@code null}: the default lane): now if the lane has fewer tasks running
     * than its cap, else once its turn in the lane's queue comes.
     *
     * @throws RejectedExecutionException when the pool was shut down
     */
    void submit(String node, Runnable task) {
        Lane lane;
        synchronized (this) {
            if (closed) {
                throw new RejectedExecutionException("the lock template was closed");
            }
            lane = lanes.computeIfAbsent(node, Lane::new);
            if (lane.running >= (node == null ? defaultCap : nodeCap)) {
                lane.queued.add(task);
                return;
            }
            lane.running++;
        }
        try {
            threads.execute(() -> drain(lane, task));
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                lane.running--;
                forgetIfIdle(lane);
            }
            throw e;
        }
    }

    /** Drops every queued task and takes no more; the tasks running end on their own. */
    synchronized void close() {
        closed = true;
        lanes.values().forEach(lane -> lane.queued.clear());
    }

    /** Tasks waiting in the queue of {@code node}'s lane, for tests and diagnostics. */
    synchronized int queued(String node) {
        Lane lane = lanes.get(node);
        return lane == null ? 0 : lane.queued.size();
    }

    private void drain(Lane lane, Runnable first) {
        Runnable task = first;
        while (task != null) {
            try {
                task.run();
            } catch (Throwable e) { // a task that throws must not stop the lane
                log.error("A lock renewal or background call failed unexpectedly", e);
            }
            synchronized (this) {
                task = lane.queued.poll();
                if (task == null) {
                    lane.running--;
                    forgetIfIdle(lane);
                }
            }
        }
    }

    private void forgetIfIdle(Lane lane) {
        if (lane.running == 0 && lane.queued.isEmpty()) {
            lanes.remove(lane.node, lane);
        }
    }
}
