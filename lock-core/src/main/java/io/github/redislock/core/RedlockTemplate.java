package io.github.redislock.core;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Exclusive, reentrant, fenced, watchdog-renewed locks over N independent Redis masters (Redlock, as antirez
 * specified it): no single Redis is trusted, a lock is held while a majority of the masters hold it.
 * <p>
 * <b>Acquiring</b> sends the engine's {@code acquire.lua} to every node at once. The lock is held when a majority
 * ({@code N/2 + 1}) granted it and time is left of its lease: validity = lease − time the acquisition took − clock
 * drift allowance (1% of the lease + 2 ms). Otherwise it is released on every node, also those that did not answer
 * (their request may still land), and tried again when a node announces a release to this client (pub/sub, one
 * subscription per node), or after a random 10-30 ms at the latest, until the wait time ends: a release on one master
 * says nothing certain about the others, so the announcement only brings the next attempt forward, and the bounded
 * retry covers an announcement that was missed (a node down, a subscription being restored). The quorum calls are
 * {@link RedlockStore}'s; everything else is the engine every backend shares ({@link ExclusiveEngine}): the in-JVM
 * queue, the wait loop, the watchdog, lost-lock listeners, observers, diagnostics and {@code holdAtLeast}. Unlike one
 * Redis, a release never hands the lock over to the next thread of this JVM: it goes through the nodes.
 * A waiting client is registered as a waiter on each node ({@code acquire.lua}), so a release keeps the lock for the
 * longest-waiting clients for a moment ({@code release.lua}'s turn): a JVM that just released cannot take the lock
 * straight back for its next thread while other clients wait.
 * Threads of one JVM queue for a key in memory first, so Redis sees one contender per JVM, and a nested acquisition by
 * the holder costs no round trip.
 * <p>
 * <b>Fencing token</b>: each node's {@code acquire.lua} answers with its own token (its clock in microseconds, above
 * that node's counter); the lock's token is the highest of the majority's, and is then written back to the fencing
 * counter of every node ({@code redlock-fence.lua}, kept {@link RedlockStore#FENCE_MEMORY}), of which a majority must
 * acknowledge it. Any two majorities share a node, so a later acquisition's majority contains a node that recorded
 * the earlier token and hands out a higher one: the new token, the highest of its majority's, is higher than every
 * earlier one. When that shared node lost its counter (restarted without persistence) or forgot it (after the fence
 * memory), its token comes from its clock, which is still above the earlier token as long as the nodes' clocks agree
 * to within the time that passed (the fence memory, or the node's restart): the clock assumption Redlock makes anyway.
 * <p>
 * <b>Watchdog</b>: without an explicit lease, every third of the lease the template's {@link Watchdog} renews the
 * locks due in batches ({@code renew-many.lua}) on every node at once, each settled once a majority answered, so a
 * frozen node delays no renewal; a node that no longer has a lock (restarted empty) is asked to grant it again, but
 * never once its holder began releasing it. When fewer than a majority still hold it, or no majority answered before
 * the lease ran out, the handle is marked lost, listeners are told, and its release throws {@link LockLostException}.
 * <p>
 * <b>Lock types</b>: the exclusive lock, which is all of {@link LockOperations}; read/write, fair and semaphore locks
 * need several keys kept consistent per node and are {@link RedisLockTemplate}'s only.
 * <p>
 * <b>Restarts</b>: a node that restarts empty forgets its locks, and one that restarts from an RDB snapshot or an AOF
 * not fsynced on every write forgets those granted after its last save; when it was one of a holder's bare majority
 * (common under contention) a second client could take a majority with it. So every node keeps a restart marker
 * naming the node process ({@code run_id}) that wrote it, and a node without it, or whose marker another process
 * wrote, grants nothing for the restart delay (antirez's delayed restart; see {@code acquire.lua}), counted from its
 * start (read from {@code INFO server} inside the script, only when the node would grant: no extra round trip): every
 * lock it forgot has expired by then. The holder's watchdog may still put its own lock
 * back there, which gives it to nobody new. A client's first acquisition marks the nodes of a new deployment (every
 * node answers, none has the marker) so that they grant at once; every node restarting empty at once looks the same
 * to a client starting just then, while a client that has seen the nodes before never takes them for new.
 */
public final class RedlockTemplate implements LockOperations {

    public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(1);

    private final RedisLockConfig config;
    private final String clientId;
    private final Duration restartDelay;
    private final RedlockNodes nodes;
    private final ExclusiveEngine engine;
    private final RedisLockDiagnostics diagnostics;
    private final RedisLockView.Verbs verbs;
    private final Executor asyncExecutor;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** One subscription per node to this client's wake-up channel, on which {@code release.lua} announces releases. */
    private final List<WakeupSubscriber> subscribers;

    /** Over {@code nodes} named "node 1", "node 2", ..., with the default node timeout. */
    public RedlockTemplate(List<StringRedisTemplate> nodes, RedisLockConfig config) {
        this(named(nodes), config, DEFAULT_NODE_TIMEOUT);
    }

    /** With a restart delay of the watchdog lease; see {@link #RedlockTemplate(Map, RedisLockConfig, Duration, Duration)}. */
    public RedlockTemplate(Map<String, StringRedisTemplate> nodes, RedisLockConfig config, Duration nodeTimeout) {
        this(nodes, config, nodeTimeout, Objects.requireNonNull(config, "config").watchdogLease());
    }

    /**
     * @param nodes the independent masters by the name messages give them (say {@code host:port}); an odd number, at least 3
     * @param nodeTimeout how long an attempt waits for the nodes' replies at most (the drivers' own timeouts should
     *        not be longer); a node that has not answered by then counts as failed for that attempt
     * @param restartDelay how long a node that restarted (with or without persistence) or was flushed grants no
     *        lock: at least the longest lease any client takes on these nodes, so every lock it forgot has expired
     *        first. At least the watchdog lease; an acquisition asking for a longer fixed lease is refused.
     * @throws IllegalArgumentException for fewer than 3 or an even number of nodes, or a restart delay shorter than
     *         the watchdog lease
     */
    public RedlockTemplate(Map<String, StringRedisTemplate> nodes, RedisLockConfig config, Duration nodeTimeout,
            Duration restartDelay) {
        Objects.requireNonNull(nodes, "nodes");
        this.config = Objects.requireNonNull(config, "config");
        if (Objects.requireNonNull(restartDelay, "restartDelay").compareTo(config.watchdogLease()) < 0) {
            throw new IllegalArgumentException("The Redlock restart delay (redis-lock.redlock.restart-delay) must be at least "
                    + "the watchdog lease (redis-lock.lease-time, " + config.watchdogLease() + "), was " + restartDelay
                    + ": a node that came back empty must not grant a lock while one it forgot may still be held");
        }
        this.restartDelay = restartDelay;
        if (nodes.size() < 3 || nodes.size() % 2 == 0) {
            throw new IllegalArgumentException("Redlock needs an odd number of independent Redis masters, at least 3, "
                    + "and was given " + nodes.size() + " (" + nodes.keySet() + "): with an even number a majority "
                    + "tolerates no more failed nodes than with one node fewer");
        }
        nodes.forEach((name, redis) -> Objects.requireNonNull(redis, () -> "Redis template of node " + name));
        if (Objects.requireNonNull(nodeTimeout, "nodeTimeout").isNegative() || nodeTimeout.isZero()) {
            throw new IllegalArgumentException("nodeTimeout must be positive, was " + nodeTimeout);
        }
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        this.clientId = HexFormat.of().formatHex(id);
        RedisLockKeys keys = new RedisLockKeys(config.keyPrefix());
        this.nodes = new RedlockNodes(nodes, keys, clientId);
        this.subscribers = nodes.values().stream()
                .map(redis -> new WakeupSubscriber(Objects.requireNonNull(redis.getConnectionFactory(), "connection factory"),
                        keys.wakeChannelPrefix() + clientId, this::wake, this::wakeAll))
                .toList();
        // listening while any node's subscription is up: an announcement only brings the next attempt forward
        WaitLoop waitLoop = new WaitLoop(() -> subscribers.stream().map(WakeupSubscriber::isListening).toList().contains(true),
                () -> null);
        this.engine = new ExclusiveEngine(new RedlockStore(this.nodes, keys, nodeTimeout.toNanos(), restartDelay), waitLoop,
                clientId, config.watchdogLease(), closed::get);
        this.diagnostics = new RedisLockDiagnostics(engine.watchdog, subscribers.get(0),
                () -> engine.locks.keys(), engine.activity);
        this.asyncExecutor = AsyncLockExecutor.create(config.asyncHolders());
        this.verbs = new RedisLockView.Verbs(this::tryAcquire, config.defaultWaitTime(), asyncExecutor);
    }

    /**
     * The exclusive lock of the key on a majority of the nodes: reentrant, fenced, watchdog-leased. {@code lock()}
     * waits without bound and keeps waiting when interrupted; {@code newCondition()} is not supported.
     *
     * @throws IllegalArgumentException for a null, blank, over-long or control-character key
     */
    @Override
    public RedisLock lock(String key) {
        return engine.lock(validateKey(key), verbs);
    }

    @Override
    public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options) {
        checkLease("" + keys, options.leaseTime());
        return MultiLock.acquire(engine.acquireAll(options), MultiLock.sortedKeys(keys), waitTime(options),
                options.leaseTime(), true);
    }

    @Override
    public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options) {
        checkLease("" + keys, options.leaseTime());
        return Optional.ofNullable(MultiLock.acquire(engine.acquireAll(options), MultiLock.sortedKeys(keys),
                waitTime(options), options.leaseTime(), false));
    }

    @Override
    public Executor asyncExecutor() {
        return asyncExecutor;
    }

    @Override
    public void addLockLostListener(LockLostListener listener) {
        engine.watchdog.addLockLostListener(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public void addObserver(LockObserver observer) {
        engine.activity.addObserver(Objects.requireNonNull(observer, "observer"));
    }

    @Override
    public RedisLockDiagnostics diagnostics() {
        return diagnostics;
    }

    @Override
    public RedisLockConfig config() {
        return config;
    }

    /** This client's random id (128 bits, hex); the owner of a lock in Redis is this id plus the thread. */
    @Override
    public String clientId() {
        return clientId;
    }

    /** The nodes' names, in the order they were given. */
    public List<String> nodeNames() {
        return nodes.names();
    }

    /** How long a node that restarted or came back empty grants no lock. */
    public Duration restartDelay() {
        return restartDelay;
    }

    /** How many nodes must hold a lock: {@code N/2 + 1}. */
    public int quorum() {
        return nodes.quorum();
    }

    /** How many threads of this JVM wait in its queue for {@code key} (for tests). */
    int queuedThreads(String key) {
        LocalLock lock = engine.locks.get(key);
        return lock == null ? 0 : lock.mutex.getQueueLength();
    }

    /** Stops the watchdog and the subscriptions. Held locks are not released: they expire with their lease. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            engine.watchdog.close();
            subscribers.forEach(WakeupSubscriber::close);
            nodes.close();
        }
    }

    /** Checks a lock key as every acquisition does; see {@link RedisLockTemplate#validateKey}. */
    public static String validateKey(String key) {
        return RedisLockKeys.validate(key);
    }

    private Optional<LockHandle> tryAcquire(String key, Duration wait, LockOptions options) {
        checkLease(key, options.leaseTime());
        return engine.tryAcquire(key, wait, options);
    }

    private void checkLease(String key, @Nullable Duration lease) {
        if (closed.get()) {
            throw new IllegalStateException("This RedlockTemplate is closed");
        }
        if (lease != null && lease.compareTo(restartDelay) > 0) {
            throw new IllegalArgumentException("Redlock '" + key + "' asked for a lease of " + lease + ", longer than the "
                    + "restart delay (redis-lock.redlock.restart-delay, " + restartDelay + "): a node that came back empty "
                    + "could grant the lock again while this lease still ran. Raise the restart delay or shorten the lease");
        }
    }

    private Duration waitTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        return options.waitTime() != null ? options.waitTime() : config.defaultWaitTime();
    }

    private static Map<String, StringRedisTemplate> named(List<StringRedisTemplate> nodes) {
        Objects.requireNonNull(nodes, "nodes");
        Map<String, StringRedisTemplate> named = new LinkedHashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            named.put("node " + (i + 1), nodes.get(i));
        }
        return named;
    }

    /** A node announced a release of {@code key} to this client: its waiting thread for the key tries again now. */
    private void wake(String key) {
        engine.locks.wake(key);
    }

    /** A node's subscription came up (again): announcements may have been missed, so every waiting thread tries again. */
    private void wakeAll() {
        engine.locks.wakeAll();
    }
}
