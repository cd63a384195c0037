package io.github.redislock.core;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Exclusive, reentrant, fenced, watchdog-renewed locks over N independent Redis masters (Redlock, as antirez
 * specified it): no single Redis is trusted, a lock is held while a majority ({@code N/2 + 1}) of the masters hold it
 * and time is left of its lease (validity = lease − the time the acquisition took − the drift allowance).
 * <p>
 * The quorum calls are {@link RedlockStore}'s: every call goes to every node at once and settles once a majority
 * answered, so a frozen node delays no acquisition, renewal or release. Everything else is the engine every backend
 * shares ({@link ExclusiveEngine}): the in-JVM queue, the wait loop, the batched watchdog, lost-lock listeners,
 * observers, diagnostics and {@code holdAtLeast}; unlike one Redis, a release never hands the lock over in memory.
 * The fencing token is the highest of the majority's, written back to a majority's counters. A node that restarted
 * (empty, or from persisted data) grants nothing for the restart delay, so no lock it forgot can be granted twice.
 * Read/write, fair and semaphore locks need several keys kept consistent per node and are
 * {@link RedisLockTemplate}'s only. The reference is {@code docs/redlock.md}.
 */
public final class RedlockTemplate implements LockOperations {

    public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(1);

    private final RedisLockConfig config;
    private final Duration restartDelay;
    private final RedlockNodes nodes;
    private final EngineContext context;
    private final ExclusiveEngine engine;
    private final RedisLockDiagnostics diagnostics;
    private final RedisLockView.Verbs verbs;
    private final Executor asyncExecutor;
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
        String clientId = EngineContext.newClientId();
        RedisLockKeys keys = new RedisLockKeys(config.keyPrefix());
        this.nodes = new RedlockNodes(nodes, keys, clientId);
        // a node announces a release of a key to this client: its waiting thread for the key tries again now; a
        // subscription that came (back) up may have missed some, so every waiting thread tries again
        this.subscribers = nodes.values().stream()
                .map(redis -> new WakeupSubscriber(Objects.requireNonNull(redis.getConnectionFactory(), "connection factory"),
                        keys.wakeChannelPrefix() + clientId, this::wake, this::wakeAll))
                .toList();
        // listening while any node's subscription is up: an announcement only brings the next attempt forward
        // the watchdog's renewals wait for the nodes' own call threads, which borrow the connections
        this.context = new EngineContext("RedlockTemplate", clientId, config.watchdogLease(), new WaitLoop(
                () -> subscribers.stream().map(WakeupSubscriber::isListening).toList().contains(true), () -> null),
                Integer.MAX_VALUE, key -> null); // a background call asks every node, none waiting over its node timeout
        this.engine = new ExclusiveEngine(context, new RedlockStore(this.nodes, keys, nodeTimeout.toNanos(), restartDelay));
        this.diagnostics = new RedisLockDiagnostics(context.watchdog, subscribers.get(0), engine::inUse, context.activity);
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
        context.watchdog.addLockLostListener(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public void addObserver(LockObserver observer) {
        context.activity.addObserver(Objects.requireNonNull(observer, "observer"));
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
        return context.clientId;
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

    /**
     * Stops the watchdog, the release subscriptions and the nodes' call threads. Held locks are not released: they
     * expire with their lease, unless their holder releases them, which still works while the nodes' clients run
     * (each such release calls the nodes on threads of its own). New acquisitions throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (context.closeOnce()) {
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

    private void wake(String key) {
        engine.wake(key);
    }

    private void wakeAll() {
        engine.wakeAll();
    }
}
