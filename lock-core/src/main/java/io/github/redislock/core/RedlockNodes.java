package io.github.redislock.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The independent Redis masters of a {@link RedlockTemplate} and the quorum calls made on them. Every call goes to
 * all nodes at once, one pooled thread per node, so an acquisition costs one round trip to the slowest node of the
 * majority, not one per node; the caller waits only until the replies settle the question (a majority said yes, or
 * a majority no longer can) or the time allowed runs out. Each node runs the engine's own scripts
 * ({@code acquire.lua}, {@code renew.lua}, {@code release.lua} through {@link LockScripts}); what a majority of
 * replies means is {@link RedlockStore}'s.
 */
final class RedlockNodes implements AutoCloseable {

    /**
     * How many calls to one node run at once (fewer when the node's client has fewer pooled connections: see
     * {@link PooledConnections}); more wait in that node's queue, and one whose reply deadline passed while it waited
     * is dropped unsent. A frozen node (stopped, not refusing connections) so pins at most this many threads, and
     * holds up no call to the other nodes.
     */
    static final int CALLS_PER_NODE = 64;

    /**
     * How long a node may leave calls unanswered before a release or a renewal stops waiting for it: a node that
     * answered nothing for this long while calls to it were pending is taken for frozen, and a release returns once
     * a majority answered, its call to that node still on its way.
     */
    static final long STALLED_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** How often a wait for replies looks again whether the nodes it still waits for stalled meanwhile. */
    private static final long STALL_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** How often a call is sent again on another connection when the node had closed the one it went out on. */
    static final int CLOSED_CONNECTION_RETRIES = 3;

    private final List<Node> nodes;
    private final int quorum;
    /** Each node's calls, by node name: a thread pool of its own, so a frozen node holds up no other node's calls. */
    private final Map<String, Lane> lanes = new LinkedHashMap<>();

    /** One Redis master: its name in messages, its client and the engine's scripts on it. */
    record Node(String name, StringRedisTemplate redis, LockScripts scripts) {
    }

    RedlockNodes(Map<String, StringRedisTemplate> nodes, RedisLockKeys keys, String clientId) {
        List<Node> list = new ArrayList<>();
        nodes.forEach((name, redis) -> list.add(new Node(name, redis, new LockScripts(redis, keys, clientId))));
        this.nodes = List.copyOf(list);
        this.quorum = list.size() / 2 + 1;
        AtomicInteger threads = new AtomicInteger();
        for (Node node : this.nodes) {
            int calls = PooledConnections.callsAtOnce(node.redis().getRequiredConnectionFactory(), false,
                    CALLS_PER_NODE);
            ThreadPoolExecutor pool = new ThreadPoolExecutor(calls, calls, 60, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), task -> {
                        Thread thread = new Thread(task, "redis-lock-redlock-" + threads.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
            pool.allowCoreThreadTimeOut(true);
            lanes.put(node.name(), new Lane(pool));
        }
    }

    int size() {
        return nodes.size();
    }

    int quorum() {
        return quorum;
    }

    List<String> names() {
        return nodes.stream().map(Node::name).toList();
    }

    /** Sends {@code call} to every node without waiting for the replies (a failed one is left to the lease). */
    void inBackground(Function<Node, ?> call) {
        for (Node node : nodes) {
            lanes.get(node.name()).execute(() -> {
                try {
                    call.apply(node);
                } catch (RuntimeException ignored) {
                    // the lease ends it on that node
                }
            });
        }
    }

    /** For {@link #callAll}: settled only once every node answered (or the deadline passed). */
    static boolean everyAnswer(Replies<?> replies) {
        return false;
    }

    /** Whether every node {@code replies} still waits for is taken for frozen (see {@link #STALLED_NANOS}). */
    boolean restStalled(Replies<?> replies) {
        return replies.waiting.stream().allMatch(name -> lanes.get(name).stalled());
    }

    /**
     * Sends {@code call} to every node at once and collects the replies until {@code settled} holds, every node
     * answered (also when {@code settled} does not say so), or the deadline passed. An interrupt does not cut the
     * wait short (it is bounded by the deadline); the flag is restored afterwards. A call still in its node's queue
     * at the deadline is dropped unsent.
     */
    <T> Replies<T> callAll(Function<Node, T> call, long deadlineNanos, Predicate<Replies<T>> settled) {
        BlockingQueue<Outcome<T>> done = new LinkedBlockingQueue<>();
        for (Node node : nodes) {
            Lane lane = lanes.get(node.name());
            lane.execute(() -> {
                if (System.nanoTime() - deadlineNanos >= 0) {
                    done.add(new Outcome<>(node, null, new QueryTimeoutException("not sent: the node had not taken the "
                            + "calls before it (" + lane.pending() + " waiting) when this one's time ran out")));
                    return;
                }
                try {
                    T value = callRetryingClosedConnections(call, node, deadlineNanos);
                    lane.answered();
                    done.add(new Outcome<>(node, value, null));
                } catch (RuntimeException e) {
                    done.add(new Outcome<>(node, null, e));
                }
            });
        }
        Replies<T> replies = new Replies<>(names(), done);
        replies.await(deadlineNanos, settled);
        return replies;
    }

    /**
     * Runs {@code call} on {@code node}, again (up to {@link #CLOSED_CONNECTION_RETRIES} times, before the deadline)
     * when it failed on a connection the node had closed: a pooled connection to a node that restarted or dropped
     * its clients fails once, and without the retry a live node would count as failed (an acquisition then short of
     * a majority, a release lost until the lease ends). Every call here may run twice: the scripts find their own
     * earlier effect and keep it. A node nobody listens on fails at once, without retries.
     */
    private static <T> T callRetryingClosedConnections(Function<Node, T> call, Node node, long deadlineNanos) {
        for (int retries = 0; ; retries++) {
            try {
                return call.apply(node);
            } catch (RedisConnectionFailureException e) {
                if (retries == CLOSED_CONNECTION_RETRIES || refused(e) || System.nanoTime() - deadlineNanos >= 0) {
                    throw e;
                }
            }
        }
    }

    private static boolean refused(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof java.net.ConnectException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Lets each node's pooled threads end once their calls are done. A call made after this (the release of a lock
     * held across the close) runs on a thread of its own.
     */
    @Override
    public void close() {
        lanes.values().forEach(lane -> lane.pool.shutdown());
    }

    /**
     * One node's calls: its own pool of up to {@link #CALLS_PER_NODE} threads and a queue, and when it last answered,
     * so that a node that stopped answering (frozen) is told from one that is merely busy.
     */
    private static final class Lane {

        final ThreadPoolExecutor pool;
        private final AtomicInteger pending = new AtomicInteger();
        /** When the node last answered a call, or when a call was sent to it while none was pending. */
        private volatile long progressNanos = System.nanoTime();

        Lane(ThreadPoolExecutor pool) {
            this.pool = pool;
        }

        void execute(Runnable task) {
            if (pending.getAndIncrement() == 0) {
                progressNanos = System.nanoTime();
            }
            Runnable counted = () -> {
                try {
                    task.run();
                } finally {
                    pending.decrementAndGet();
                }
            };
            try {
                pool.execute(counted);
            } catch (RejectedExecutionException e) {
                if (!pool.isShutdown()) {
                    pending.decrementAndGet();
                    throw e;
                }
                // the template was closed: it takes no new locks, but a lock held across the close is still
                // released, on a thread of its own call (the node's calls still go out at once)
                Thread thread = new Thread(counted, "redis-lock-redlock-after-close");
                thread.setDaemon(true);
                thread.start();
            }
        }

        void answered() {
            progressNanos = System.nanoTime();
        }

        int pending() {
            return pending.get();
        }

        /** Calls are pending and none was answered for {@link #STALLED_NANOS}. */
        boolean stalled() {
            return pending.get() > 0 && System.nanoTime() - progressNanos > STALLED_NANOS;
        }
    }

    private record Outcome<T>(Node node, T value, RuntimeException error) {
    }

    /** The replies of one call so far: the answers, the failures by node, and the nodes yet to answer. */
    static final class Replies<T> {

        private final List<T> values = new ArrayList<>();
        private final Map<String, String> errors = new LinkedHashMap<>();
        final List<String> waiting;
        private final BlockingQueue<Outcome<T>> done;

        Replies(List<String> names, BlockingQueue<Outcome<T>> done) {
            this.waiting = new ArrayList<>(names);
            this.done = done;
        }

        /**
         * Collects replies until {@code settled} holds, every node answered, or the deadline passed. An interrupt does
         * not cut the wait short (it is bounded by the deadline); the flag is restored afterwards.
         */
        void await(long deadlineNanos, Predicate<Replies<T>> settled) {
            boolean interrupted = false;
            try {
                while (pending() > 0 && !settled.test(this)) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    Outcome<T> outcome;
                    try {
                        outcome = done.poll(Math.min(left, STALL_CHECK_NANOS), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        interrupted = true;
                        continue;
                    }
                    if (outcome != null) {
                        add(outcome);
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        void add(Outcome<T> outcome) {
            waiting.remove(outcome.node().name());
            if (outcome.error() == null) {
                values.add(outcome.value());
            } else {
                errors.put(outcome.node().name(), rootMessage(outcome.error()));
            }
        }

        List<T> values() {
            return values;
        }

        long count(Predicate<T> test) {
            return values.stream().filter(test).count();
        }

        /** Nodes that failed or did not answer in time. */
        long failed() {
            return errors.size();
        }

        int pending() {
            return waiting.size();
        }

        /** The nodes that failed or have not answered yet: a request to them may still land. */
        Set<String> unanswered() {
            if (errors.isEmpty() && waiting.isEmpty()) {
                return Set.of();
            }
            Set<String> names = new HashSet<>(errors.keySet());
            names.addAll(waiting);
            return names;
        }

        /** "; 127.0.0.1:7001 failed: Connection refused; 127.0.0.1:7002 did not answer in time", or "". */
        String failures() {
            StringBuilder sb = new StringBuilder();
            errors.forEach((name, error) -> sb.append("; ").append(name).append(" failed: ").append(error));
            waiting.forEach(name -> sb.append("; ").append(name).append(" did not answer in time"));
            return sb.toString();
        }

        private static String rootMessage(Throwable error) {
            Throwable root = error;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            String message = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
            return root == error ? message : error.getClass().getSimpleName() + " (" + message + ")";
        }
    }
}
