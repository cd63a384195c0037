package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;

import io.github.redislock.core.LockScripts.AcquireReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The independent Redis masters of a {@link RedlockTemplate} and the quorum calls made on them. Every call goes to
 * all nodes at once, one pooled thread per node, so an acquisition costs one round trip to the slowest node of the
 * majority, not one per node; the caller waits only until the replies settle the question (a majority said yes, or
 * a majority no longer can) or the time allowed runs out. Each node runs the engine's own scripts
 * ({@code acquire.lua}, {@code renew.lua}, {@code release.lua} through {@link LockScripts}); the only Redlock script
 * is {@code redlock-fence.lua}, which raises a node's fencing counter to the token the majority handed out.
 */
final class RedlockNodes implements AutoCloseable {

    private static final RedisScript<Long> RAISE_FENCE = LockScripts.load("redlock-fence");
    private static final RedisScript<Long> MARK_NEW = LockScripts.load("redlock-mark");

    /**
     * How long a node's fencing counter keeps the last Redlock token. A later acquisition that reaches the node
     * within it gets a higher token from the counter; after it, from the node's clock (see {@link RedlockTemplate}).
     */
    static final Duration FENCE_MEMORY = Duration.ofMinutes(1);

    /**
     * How many calls to one node run at once; more wait in that node's queue, and one whose reply deadline passed
     * while it waited is dropped unsent. A frozen node (stopped, not refusing connections) so pins at most this many
     * threads, and holds up no call to the other nodes.
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

    private static final Logger log = LoggerFactory.getLogger(RedlockNodes.class);

    private final List<Node> nodes;
    private final int quorum;
    private final RedisLockKeys keys;
    /** Each node's calls, by node name: a thread pool of its own, so a frozen node holds up no other node's calls. */
    private final Map<String, Lane> lanes = new LinkedHashMap<>();
    /** The key each node keeps while it remembers its locks; see {@code acquire.lua}. */
    private final String restartMarker;
    private final long restartDelayMillis;
    /** Whether this client looked for a new deployment yet (on its first acquisition that reached a node). */
    private volatile boolean deploymentChecked;
    /** Held while looking, so the client's other threads do not reach the nodes before the look is done. */
    private final ReentrantLock checkingDeployment = new ReentrantLock();
    /** Until when (System.nanoTime) each node said it sits out its restart delay, so each delay is logged once. */
    private final Map<String, Long> restarting = new ConcurrentHashMap<>();

    /** One Redis master: its name in messages, its client and the engine's scripts on it. */
    record Node(String name, StringRedisTemplate redis, LockScripts scripts) {
    }

    /**
     * @param restartDelay how long a node that restarted, came back empty or is new grants nothing: at least the longest lease
     *        any client takes on these nodes
     */
    RedlockNodes(Map<String, StringRedisTemplate> nodes, RedisLockKeys keys, String clientId, Duration restartDelay) {
        this.restartMarker = keys.prefix() + ":redlock-restart-marker";
        this.restartDelayMillis = restartDelay.toMillis();
        List<Node> list = new ArrayList<>();
        nodes.forEach((name, redis) -> list.add(new Node(name, redis, new LockScripts(redis, keys, clientId))));
        this.nodes = List.copyOf(list);
        this.quorum = list.size() / 2 + 1;
        this.keys = keys;
        AtomicInteger threads = new AtomicInteger();
        for (Node node : this.nodes) {
            ThreadPoolExecutor pool = new ThreadPoolExecutor(CALLS_PER_NODE, CALLS_PER_NODE, 60, TimeUnit.SECONDS,
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

    /**
     * Takes the lock for {@code owner} on every node that grants it, with the engine's {@code acquire.lua}. With a
     * majority, the token is the highest of the majority's, and is written back to every node's fencing counter; a
     * majority must acknowledge that too.
     *
     * @param retryMillis when the caller will try again at the latest if this attempt fails (0: it will not): each
     *        node then registers this client as waiting, so a release there keeps the lock for the clients that waited
     *        longest for a moment ({@code release.lua}'s turn) and a contender that did not wait cannot overtake them
     * @param registered whether an earlier attempt may have registered this client (withdrawn on success)
     * @param replyNanos how long to wait for the nodes' replies at most
     * @return the token (&gt; 0) on success; else the reason, and whether a majority could not be reached at all
     */
    Attempt acquire(String key, String owner, long leaseMillis, long driftNanos, long replyNanos, long retryMillis,
            boolean registered) {
        long start = System.nanoTime();
        long validityNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis) - driftNanos;
        long deadline = start + Math.min(replyNanos, Math.max(validityNanos, 0));
        // settled when a majority granted, refused (held by another owner) or failed; a split waits for the rest
        Replies<AcquireReply> grants = callAll(node -> noteRestart(node, node.scripts().redlockAcquire(key, owner, leaseMillis,
                retryMillis, registered, restartMarker, restartDelayMillis, false)), deadline,
                r -> r.count(AcquireReply::acquired) >= quorum || r.count(reply -> !reply.acquired()) >= quorum
                        || r.failed() >= quorum);
        long granted = grants.count(AcquireReply::acquired);
        if (granted < quorum) {
            // the replies still on their way, so the release that follows reaches each node after its grant, not
            // before it on another connection (which would leave the grant there for the lease)
            // (not for a node taken for frozen: its grant, should it land late, ends with the lease there)
            grants.await(deadline, this::restStalled);
            granted = grants.count(AcquireReply::acquired);
            long delayed = grants.count(AcquireReply::restarting);
            long refused = grants.count(reply -> !reply.acquired()) - delayed;
            boolean unreachable = grants.failed() + grants.pending() >= quorum;
            String reason = granted + " of " + size() + " Redis nodes granted it (a majority is " + quorum + "), "
                    + refused + " had it held by another owner"
                    + (delayed == 0 ? "" : ", " + delayed + " restarted or came back empty and grant nothing until their restart delay"
                            + " (redis-lock.redlock.restart-delay, " + restartDelayMillis + " ms) is over")
                    + grants.failures();
            return Attempt.failed(reason, unreachable, granted);
        }
        long token = grants.values().stream().filter(AcquireReply::acquired).mapToLong(AcquireReply::token).max().orElseThrow();
        String counter = keys.fence(key);
        String memory = Long.toString(FENCE_MEMORY.toMillis());
        Replies<Long> raised = callAll(node -> node.redis().execute(RAISE_FENCE, List.of(counter), Long.toString(token), memory),
                deadline, r -> r.values().size() >= quorum || r.failed() > size() - quorum);
        if (raised.values().size() < quorum) {
            return Attempt.failed("only " + raised.values().size() + " of " + size() + " Redis nodes recorded its fencing token "
                    + "(a majority is " + quorum + ")" + raised.failures(), true, granted);
        }
        long validUntil = start + validityNanos;
        long now = System.nanoTime();
        if (now - validUntil >= 0) {
            return Attempt.failed("a majority granted it, but only after " + TimeUnit.NANOSECONDS.toMillis(now - start)
                    + " ms, when its lease of " + leaseMillis + " ms had (nearly) run out", false, granted);
        }
        return new Attempt(token, validUntil, null, false, granted, () -> grants.await(deadline, this::restStalled));
    }

    /**
     * Extends {@code owner}'s lease on every node with the engine's {@code renew.lua}; a node that no longer holds it
     * for {@code owner} (restarted without persistence, say) is asked to grant it again, so the holding goes back to
     * every node it can. Only renewals count towards the majority: a lock a majority lost is lost, even when the
     * free nodes would grant it again.
     */
    Renewal renew(String key, String owner, long leaseMillis, long replyNanos) {
        long start = System.nanoTime();
        Replies<Boolean> renewed = callAll(node -> {
            if (node.scripts().renew(key, owner, leaseMillis)) {
                return true;
            }
            // back on this node, if it is free: also on a node sitting out its restart delay, which gives the lock
            // to nobody new (the holder's lease is still valid)
            noteRestart(node, node.scripts().redlockAcquire(key, owner, leaseMillis, 0, false, restartMarker,
                    restartDelayMillis, true));
            return false;
        }, start + replyNanos, r -> r.count(Boolean::booleanValue) >= quorum || r.values().size() + r.failed() == size()
                || restStalled(r));
        // settled by a majority renewed: a node still to answer (frozen, say) holds up neither this renewal nor the next
        // lock's; one that finds it lost waits for every node that is not taken for frozen, to say where it still is
        long held = renewed.count(Boolean::booleanValue);
        long gone = renewed.count(still -> !still);
        return new Renewal(start, held >= quorum, gone > size() - quorum,
                held + " of " + size() + " Redis nodes still held it (a majority is " + quorum + "), " + gone + " no longer did"
                        + renewed.failures());
    }

    /**
     * Releases {@code owner}'s lock on every node, also those that did not answer the acquisition (its request may
     * still land there), waiting for the replies up to {@code replyNanos}.
     *
     * @return how many nodes said {@code owner} still held the lock there
     */
    long release(String key, String owner, long replyNanos) {
        return release(key, owner, size(), replyNanos);
    }

    /**
     * Like {@link #release(String, String, long)}, but done waiting once {@code holders} nodes said they released it
     * (those known to have granted it): a node that does not answer does not hold up a failed attempt's retry.
     */
    long release(String key, String owner, long holders, long replyNanos) {
        Replies<Boolean> released = callAll(node -> node.scripts().release(key, owner).wasOwner(), System.nanoTime() + replyNanos,
                r -> r.values().size() + r.failed() == size() || r.count(Boolean::booleanValue) >= holders
                        || r.values().size() >= quorum && restStalled(r));
        return released.count(Boolean::booleanValue);
    }

    /**
     * Withdraws this client from the waiting clients of {@code key} on every node, waiting for the replies up to
     * {@code replyNanos} (an entry on a node that does not answer expires a second after this client's last attempt).
     */
    void leave(String key, long replyNanos) {
        callAll(node -> {
            node.scripts().leave(key);
            return Boolean.TRUE;
        }, System.nanoTime() + replyNanos, r -> r.values().size() + r.failed() == size() || restStalled(r));
    }

    /** Like {@link #release}, without waiting for the replies. */
    void releaseInBackground(String key, String owner) {
        for (Node node : nodes) {
            lanes.get(node.name()).execute(() -> {
                try {
                    node.scripts().release(key, owner);
                } catch (RuntimeException ignored) {
                    // the lease ends it on that node
                }
            });
        }
    }

    /**
     * On this client's first acquisition that reaches a node: when every node answers and none has its restart
     * marker, this is a new deployment (or every node restarted empty at once, which looks the same), and the nodes
     * are marked as remembering their locks, so they grant at once. Otherwise nothing is done here: a node without
     * its marker then sits out the restart delay from the first acquisition that reaches it ({@code acquire.lua}), and
     * a client that has seen the deployment before never takes it for new. Call it before an acquisition.
     *
     * @param replyNanos how long to wait for the nodes' replies (the whole node timeout: a slow first connection
     *        that does not answer in time makes the look inconclusive, and the nodes then sit out a delay)
     */
    void checkForNewDeployment(long replyNanos) {
        if (deploymentChecked) {
            return;
        }
        checkingDeployment.lock();
        try {
            if (deploymentChecked) {
                return;
            }
            Replies<Boolean> marked = callAll(node -> Boolean.TRUE.equals(node.redis().hasKey(restartMarker)),
                    System.nanoTime() + replyNanos, r -> r.values().size() + r.failed() == size());
            // no node answered (none up yet, say): nothing learnt and nothing marked, so look again next time
            deploymentChecked = !marked.values().isEmpty();
            if (marked.values().size() == size() && marked.count(Boolean::booleanValue) == 0) {
                // redlock-mark.lua, with each node process's run_id (so that a restart from persisted data is told
                // apart), only where no marker is: a node another client's acquisition reached meanwhile keeps its delay
                callAll(node -> node.redis().execute(MARK_NEW, List.of(restartMarker)), System.nanoTime() + replyNanos,
                        r -> r.values().size() + r.failed() == size());
                log.info("Redlock nodes {} have no restart marker: a new deployment, marked to grant at once", names());
            }
        } finally {
            checkingDeployment.unlock();
        }
    }

    /** Logs once per restart delay that {@code node} restarted or came back empty and grants nothing for a while. */
    private AcquireReply noteRestart(Node node, AcquireReply reply) {
        if (reply.restarting()) {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(reply.restartDelayLeftMillis());
            Long known = restarting.put(node.name(), until);
            if (known == null || known - System.nanoTime() < 0) {
                log.warn("Redlock node {} restarted (also from persisted data), came back empty (flushed) or is new: it grants no lock "
                        + "for {} ms more, until every lock it may have held has expired (redis-lock.redlock.restart-delay)",
                        node.name(), reply.restartDelayLeftMillis());
            }
        }
        return reply;
    }

    /** Whether every node {@code replies} still waits for is taken for frozen (see {@link #STALLED_NANOS}). */
    boolean restStalled(Replies<?> replies) {
        return replies.waiting.stream().allMatch(name -> lanes.get(name).stalled());
    }

    /**
     * Sends {@code call} to every node at once and collects the replies until {@code settled} holds, every node
     * answered, or the deadline passed. An interrupt does not cut the wait short (it is bounded by the deadline);
     * the flag is restored afterwards. A call still in its node's queue at the deadline is dropped unsent.
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

    @Override
    public void close() {
        lanes.values().forEach(lane -> lane.pool.shutdown());
    }

    /**
     * One node's calls: its own pool of {@link #CALLS_PER_NODE} threads and a queue, and when it last answered, so
     * that a node that stopped answering (frozen) is told from one that is merely busy.
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
            try {
                pool.execute(() -> {
                    try {
                        task.run();
                    } finally {
                        pending.decrementAndGet();
                    }
                });
            } catch (RuntimeException e) { // rejected: shut down
                pending.decrementAndGet();
                throw e;
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

    /**
     * One acquisition attempt on all nodes.
     *
     * @param token the fencing token when acquired, else 0
     * @param validUntilNanos until when (System.nanoTime) the majority's holding is valid
     * @param failure why it was not acquired
     * @param unreachable whether a majority of nodes could not be reached (rather than another owner holding it)
     * @param granted how many nodes granted it
     * @param awaitLateReplies waits (up to the attempt's reply deadline) for the nodes that had not answered when a
     *        majority had: run it on the acquiring thread before releasing, so that the release reaches each node after
     *        its grant rather than overtaking it on another connection and leaving it there for the lease
     */
    record Attempt(long token, long validUntilNanos, String failure, boolean unreachable, long granted,
            Runnable awaitLateReplies) {

        static Attempt failed(String failure, boolean unreachable, long granted) {
            return new Attempt(0, 0, failure, unreachable, granted, () -> { });
        }

        boolean acquired() {
            return token > 0;
        }
    }

    /**
     * One renewal on all nodes.
     *
     * @param startNanos when it was sent: the new lease counts from there
     * @param held whether a majority renewed it
     * @param lost whether so many nodes no longer held it that a majority cannot
     */
    record Renewal(long startNanos, boolean held, boolean lost, String description) {
    }
}
