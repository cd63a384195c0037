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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantLock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;
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
 * retry covers an announcement that was missed (a node down, a subscription being restored).
 * A waiting client is registered as a waiter on each node ({@code acquire.lua}), so a release keeps the lock for the
 * longest-waiting clients for a moment ({@code release.lua}'s turn): a JVM that just released cannot take the lock
 * straight back for its next thread while other clients wait.
 * Threads of one JVM queue for a key in memory first, so Redis sees one contender per JVM, and a nested acquisition by
 * the holder costs no round trip.
 * <p>
 * <b>Fencing token</b>: each node's {@code acquire.lua} answers with its own token (its clock in microseconds, above
 * that node's counter); the lock's token is the highest of the majority's, and is then written back to the fencing
 * counter of every node ({@code redlock-fence.lua}, kept {@link RedlockNodes#FENCE_MEMORY}), of which a majority must
 * acknowledge it. Any two majorities share a node, so a later acquisition's majority contains a node that recorded
 * the earlier token and hands out a higher one: the new token, the highest of its majority's, is higher than every
 * earlier one. When that shared node lost its counter (restarted without persistence) or forgot it (after the fence
 * memory), its token comes from its clock, which is still above the earlier token as long as the nodes' clocks agree
 * to within the time that passed (the fence memory, or the node's restart): the clock assumption Redlock makes anyway.
 * <p>
 * <b>Watchdog</b>: without an explicit lease, every third of the lease the lock is renewed on every node with the
 * engine's {@code renew.lua}; a node that no longer has it (restarted empty) is asked to grant it again. When fewer
 * than a majority still hold it, or no majority answered before the lease ran out, the handle is marked lost,
 * listeners are told, and its release throws {@link LockLostException}.
 * <p>
 * <b>Lock types</b>: the exclusive lock only ({@link #acquire}, {@link #tryAcquire}, {@link #execute}, {@link #lock},
 * {@link #acquireAll}); read/write, fair and semaphore locks need several keys kept consistent per node and throw
 * {@link UnsupportedOperationException}. A separate class from {@link RedisLockTemplate}, with the same method names,
 * because almost none of the single-Redis engine (hand-over, pub/sub wake-ups, per-type queues) carries over.
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
public final class RedlockTemplate implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedlockTemplate.class);

    /** Antirez's clock drift allowance: 1% of the lease, plus 2 ms for the granularity of expiry. */
    static final double CLOCK_DRIFT_FACTOR = 0.01;
    private static final long DRIFT_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long RETRY_MIN_MILLIS = 10;
    private static final long RETRY_MAX_MILLIS = 30;
    /** The shortest an attempt waits for replies, also when the wait time is (nearly) over. */
    private static final long MIN_REPLY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(1);

    /**
     * How many locks are renewed at once. A renewal waits for a majority of the nodes (about one round trip), not for
     * every node; so many at once keep thousands of held locks renewed in time, each on its own schedule.
     */
    static final int WATCHDOG_THREADS = 16;

    private final RedisLockConfig config;
    private final String clientId;
    private final RedlockNodes nodes;
    private final long nodeTimeoutNanos;
    private final Duration restartDelay;
    private final Map<String, Local> locals = new ConcurrentHashMap<>();
    private final java.util.Set<RedlockHandle> renewing = ConcurrentHashMap.newKeySet();
    private final AtomicLong acquisitions = new AtomicLong();
    private final ScheduledExecutorService watchdog;
    private final ExecutorService listenerThread;
    private final List<LockLostListener> listeners = new CopyOnWriteArrayList<>();
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
        this.nodeTimeoutNanos = nodeTimeout.toNanos();
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        this.clientId = HexFormat.of().formatHex(id);
        RedisLockKeys keys = new RedisLockKeys(config.keyPrefix());
        this.nodes = new RedlockNodes(nodes, keys, clientId, restartDelay);
        this.subscribers = nodes.values().stream()
                .map(redis -> new WakeupSubscriber(Objects.requireNonNull(redis.getConnectionFactory(), "connection factory"),
                        keys.wakeChannelPrefix() + clientId, this::wake, this::wakeAll))
                .toList();
        this.watchdog = Executors.newScheduledThreadPool(WATCHDOG_THREADS, daemon("redis-lock-redlock-watchdog"));
        this.listenerThread = Executors.newSingleThreadExecutor(daemon("redis-lock-redlock-listeners"));
    }

    /**
     * Acquires the lock on a majority of the nodes, waiting up to the options' wait time.
     *
     * @throws LockNotAcquiredException if another owner still holds it after the wait time, or a majority of the nodes
     *         could not be reached within it (the cause names the nodes and what failed)
     * @throws IllegalArgumentException for a null, blank, over-long or control-character key
     */
    public LockHandle acquire(String key, LockOptions options) {
        Duration wait = waitTime(options);
        return tryAcquire(validateKey(key), wait, options.leaseTime()).orElseThrow(() -> new LockNotAcquiredException(key, wait));
    }

    /** Acquires with the default wait time and the watchdog. */
    public LockHandle acquire(String key) {
        return acquire(key, LockOptions.defaults());
    }

    /**
     * Like {@link #acquire}, but empty instead of throwing when another owner still holds the lock after the wait
     * time. A majority of unreachable nodes still throws {@link LockNotAcquiredException}.
     */
    public Optional<LockHandle> tryAcquire(String key, LockOptions options) {
        return tryAcquire(validateKey(key), waitTime(options), options.leaseTime());
    }

    /** Acquires, runs {@code action}, and releases, also when the action throws; see {@link RedisLockTemplate#execute}. */
    public <T, E extends Throwable> T execute(String key, LockOptions options, LockCallback<T, E> action) throws E {
        return RedisLockTemplate.runAndRelease(acquire(key, options), action);
    }

    /** Every key or none, sorted, within one wait time; see {@link RedisLockTemplate#acquireAll(Collection, LockOptions)}. */
    public MultiLockHandle acquireAll(Collection<String> keys, LockOptions options) {
        Duration wait = waitTime(options);
        return MultiLock.acquire(this::tryAcquire, MultiLock.sortedKeys(keys), wait, options.leaseTime(), true);
    }

    /** Like {@link #acquireAll}, but empty when another owner kept a key past the wait time. */
    public Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options) {
        Duration wait = waitTime(options);
        return Optional.ofNullable(MultiLock.acquire(this::tryAcquire, MultiLock.sortedKeys(keys), wait, options.leaseTime(), false));
    }

    /**
     * A {@link Lock} view of the key: reentrant, watchdog-leased. {@code lock()} waits without bound and keeps
     * waiting when interrupted; {@code newCondition()} is not supported.
     */
    public RedisLock lock(String key) {
        String validated = validateKey(key);
        RedisLockView.Verbs verbs = new RedisLockView.Verbs((k, wait, options) -> tryAcquire(k, wait, options.leaseTime()),
                config.defaultWaitTime(), Runnable::run);
        return new RedisLockView(validated, LockType.EXCLUSIVE, verbs) {

            @Override
            boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
                return RedlockTemplate.this.lock(validated, wait, null, interruptible) != null;
            }

            @Override
            void release() {
                Local local = locals.get(validated);
                if (local == null || !local.mutex.isHeldByCurrentThread() || local.holding == null) {
                    throw new IllegalMonitorStateException("Lock '" + validated + "' is not held by thread '"
                            + Thread.currentThread().getName() + "'");
                }
                if (local.mutex.getHoldCount() > 1) {
                    local.mutex.unlock(); // a nested hold
                } else {
                    local.holding.release();
                }
            }

            @Override
            public String toString() {
                return "RedlockLock[" + validated + "]";
            }
        };
    }

    /** Not supported over Redlock. */
    public ReadWriteLock readWriteLock(String key) {
        throw unsupported("read/write locks");
    }

    /** Not supported over Redlock. */
    public Lock fairLock(String key) {
        throw unsupported("fair locks");
    }

    /** Not supported over Redlock. */
    public RedisSemaphore semaphore(String key, int permits) {
        throw unsupported("semaphores");
    }

    /** Registers a listener told when a held lock is found lost; called on a thread of its own, one after another. */
    public void addLockLostListener(LockLostListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    public RedisLockConfig config() {
        return config;
    }

    /** This client's random id (128 bits, hex); the owner of a lock in Redis is this id plus the thread. */
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

    /** How many keys this JVM holds or waits for now (for diagnostics and tests). */
    public int localLockCount() {
        return locals.size();
    }

    /** How many threads of this JVM wait in its queue for {@code key} (for tests). */
    int queuedThreads(String key) {
        Local local = locals.get(key);
        return local == null ? 0 : local.mutex.getQueueLength();
    }

    /** How many held locks the watchdog renews now; zero once nothing is held. */
    public int scheduledRenewalCount() {
        return renewing.size();
    }

    /** Stops the watchdog. Held locks are not released: they expire with their lease. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            watchdog.shutdownNow();
            listenerThread.shutdown();
            subscribers.forEach(WakeupSubscriber::close);
            nodes.close();
        }
    }

    /** Checks a lock key as every acquisition does; see {@link RedisLockTemplate#validateKey}. */
    public static String validateKey(String key) {
        return RedisLockKeys.validate(key);
    }

    private Optional<LockHandle> tryAcquire(String key, Duration wait, Duration lease) {
        try {
            return Optional.ofNullable(lock(key, wait, lease, true));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, wait, e);
        }
    }

    /**
     * The acquisition every entry point shares: the key's in-memory queue first, then attempts on the nodes until
     * the deadline.
     *
     * @return the handle, or {@code null} when another owner kept the lock past the wait time
     * @throws LockNotAcquiredException when the last attempt found a majority of nodes unreachable
     */
    private RedlockHandle lock(String key, Duration wait, Duration lease, boolean interruptible) throws InterruptedException {
        if (closed.get()) {
            throw new IllegalStateException("This RedlockTemplate is closed");
        }
        if (lease != null && lease.compareTo(restartDelay) > 0) {
            throw new IllegalArgumentException("Redlock '" + key + "' asked for a lease of " + lease + ", longer than the "
                    + "restart delay (redis-lock.redlock.restart-delay, " + restartDelay + "): a node that came back empty "
                    + "could grant the lock again while this lease still ran. Raise the restart delay or shorten the lease");
        }
        boolean forever = wait.compareTo(Duration.ofDays(365 * 100L)) > 0;
        long deadline = forever ? Long.MAX_VALUE : System.nanoTime() + wait.toNanos();
        Local local = locals.compute(key, (k, existing) -> (existing == null ? new Local() : existing).use());
        boolean locked = false;
        boolean returned = false;
        boolean interrupted = false;
        try {
            while (!locked) {
                try {
                    locked = forever ? lockForever(local.mutex, interruptible)
                            : local.mutex.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    if (!locked) {
                        String unreachable = local.unreachable;
                        if (unreachable != null) { // this JVM's holder of the queue could not reach a majority either
                            throw new LockNotAcquiredException(key, wait, new DataAccessResourceFailureException(
                                    "a majority of the Redlock nodes could not be reached: " + unreachable));
                        }
                        return null;
                    }
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
            if (local.mutex.getHoldCount() > 1) {
                RedlockHandle outer = local.holding;
                if (!outer.isHeld()) {
                    throw new LockLostException(key, outer.fencingToken(), "re-entered after it was lost: " + outer.lostReason());
                }
                unuse(key, local); // the outer acquisition keeps the key in use
                returned = true;
                return outer.nested(nested -> local.mutex.unlock());
            }
            RedlockHandle handle = acquireOnNodes(key, wait, lease, forever, deadline, interruptible, local);
            if (handle != null) {
                local.holding = handle;
                returned = true;
            }
            return handle;
        } finally {
            if (!returned) {
                if (locked) {
                    local.mutex.unlock();
                }
                unuse(key, local);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static boolean lockForever(ReentrantLock mutex, boolean interruptible) throws InterruptedException {
        if (interruptible) {
            mutex.lockInterruptibly();
        } else {
            mutex.lock();
        }
        return true;
    }

    private RedlockHandle acquireOnNodes(String key, Duration wait, Duration lease, boolean forever, long deadline,
            boolean interruptible, Local local)
            throws InterruptedException {
        long leaseMillis = (lease != null ? lease : config.watchdogLease()).toMillis();
        long driftNanos = (long) (TimeUnit.MILLISECONDS.toNanos(leaseMillis) * CLOCK_DRIFT_FACTOR) + DRIFT_MARGIN_NANOS;
        boolean interrupted = false;
        nodes.checkForNewDeployment(nodeTimeoutNanos);
        try {
            boolean tryOnce = wait.isZero();
            for (boolean first = true; ; first = false) {
                String owner = clientId + ":" + Thread.currentThread().getId() + ":" + acquisitions.incrementAndGet();
                if (!tryOnce) {
                    subscribers.forEach(WakeupSubscriber::startIfNeeded);
                }
                long releasesSeen = local.releases(); // before the attempt, so an announcement during it is not missed
                long left = forever ? Long.MAX_VALUE : deadline - System.nanoTime();
                // trying once gets the whole node timeout; waiting, an attempt gets no more than the wait leaves
                long replyNanos = tryOnce ? nodeTimeoutNanos : Math.min(nodeTimeoutNanos, Math.max(left, MIN_REPLY_NANOS));
                RedlockNodes.Attempt attempt = nodes.acquire(key, owner, leaseMillis, driftNanos, replyNanos,
                        tryOnce ? 0 : RETRY_MAX_MILLIS, !first);
                local.unreachable = attempt.unreachable() ? attempt.failure() : null;
                if (attempt.acquired()) {
                    RedlockHandle handle = RedlockHandle.outermost(key, owner, attempt.token(), attempt.validUntilNanos(),
                            this::release);
                    handle.awaitLateGrants(attempt.awaitLateReplies());
                    if (lease == null) {
                        scheduleRenewal(handle, leaseMillis, driftNanos);
                    }
                    return handle;
                }
                left = forever ? Long.MAX_VALUE : deadline - System.nanoTime();
                if (left <= 0) {
                    // the last attempt: no longer waiting (so a release keeps no turn for this client), and released on
                    // every node before the caller hears of it, so nothing is left half-held where a node answered
                    // late (a node that does not answer is not waited for long)
                    if (!tryOnce) {
                        nodes.leave(key, Math.min(replyNanos, MIN_REPLY_NANOS));
                    }
                    nodes.release(key, owner, Math.min(replyNanos, MIN_REPLY_NANOS));
                } else if (attempt.granted() > 0) {
                    // released before the next attempt, so this one's grants hold up nobody, and on the nodes that did
                    // not answer too, where the request may still land
                    nodes.release(key, owner, attempt.granted(), replyNanos);
                } else {
                    nodes.releaseInBackground(key, owner);
                }
                long sleepMillis = ThreadLocalRandom.current().nextLong(RETRY_MIN_MILLIS, RETRY_MAX_MILLIS + 1);
                if (left <= 0) {
                    if (attempt.unreachable()) {
                        throw new LockNotAcquiredException(key, wait, new DataAccessResourceFailureException("a majority of the Redlock nodes could not be reached: "
                                        + attempt.failure()));
                    }
                    log.debug("Redlock '{}' not acquired: {}", key, attempt.failure());
                    return null;
                }
                try {
                    local.awaitRelease(releasesSeen, Math.min(left, TimeUnit.MILLISECONDS.toNanos(sleepMillis)));
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void scheduleRenewal(RedlockHandle handle, long leaseMillis, long driftNanos) {
        long period = Math.max(1, leaseMillis / 3);
        renewing.add(handle);
        handle.renewal(watchdog.scheduleWithFixedDelay(() -> renew(handle, leaseMillis, driftNanos), period, period,
                TimeUnit.MILLISECONDS));
    }

    private void renew(RedlockHandle handle, long leaseMillis, long driftNanos) {
        if (handle.isReleased()) {
            handle.cancelRenewal();
            renewing.remove(handle);
            return;
        }
        String ranOut = handle.lostReason();
        if (ranOut != null) {
            String trouble = handle.renewalTrouble();
            lost(handle, trouble == null ? ranOut
                    : "the watchdog could not renew it on a majority before its lease ran out: " + trouble);
            return;
        }
        try {
            RedlockNodes.Renewal renewal = nodes.renew(handle.key(), handle.owner(), leaseMillis,
                    Math.min(nodeTimeoutNanos, TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 3));
            if (handle.isReleased()) {
                return;
            }
            if (renewal.held()) {
                handle.renewed(renewal.startNanos() + TimeUnit.MILLISECONDS.toNanos(leaseMillis) - driftNanos, null);
            } else if (renewal.lost()) {
                lost(handle, "the watchdog found it lost: " + renewal.description());
            } else if (System.nanoTime() - handle.validUntilNanos() >= 0) {
                lost(handle, "the watchdog could not renew it on a majority before its lease ran out: " + renewal.description());
            } else {
                handle.renewed(handle.validUntilNanos(), renewal.description());
                log.warn("Could not renew Redlock '{}' on a majority ({}); retrying", handle.key(), renewal.description());
            }
        } catch (RuntimeException e) {
            log.warn("Renewing Redlock '{}' failed; retrying", handle.key(), e);
        }
    }

    private void lost(RedlockHandle handle, String reason) {
        if (!handle.lost(reason)) {
            return;
        }
        renewing.remove(handle);
        log.warn("Redlock '{}' (fencing token {}) was lost: {}", handle.key(), handle.fencingToken(), reason);
        nodes.releaseInBackground(handle.key(), handle.owner()); // frees the minority that may still hold it
        for (LockLostListener listener : listeners) {
            listenerThread.execute(() -> {
                try {
                    listener.lockLost(handle, reason);
                } catch (RuntimeException e) {
                    log.warn("LockLostListener failed for Redlock '{}'", handle.key(), e);
                }
            });
        }
    }

    /** The outermost handle's release: on every node, then the key's in-memory queue. */
    private void release(RedlockHandle handle) {
        handle.cancelRenewal();
        renewing.remove(handle);
        String lostReason = handle.lostReason();
        Local local = locals.get(handle.key());
        try {
            handle.awaitLateGrants(); // a quick release must not overtake a grant still on its way
            nodes.release(handle.key(), handle.owner(), nodeTimeoutNanos);
        } catch (RuntimeException e) {
            log.warn("Could not release Redlock '{}' on every node; its lease ends it", handle.key(), e);
        } finally {
            if (local != null) {
                local.holding = null;
                local.mutex.unlock();
                unuse(handle.key(), local);
            }
        }
        if (lostReason != null) {
            throw new LockLostException(handle.key(), handle.fencingToken(), lostReason);
        }
    }

    private void unuse(String key, Local local) {
        locals.computeIfPresent(key, (k, existing) -> existing != local || --existing.users > 0 ? existing : null);
    }

    private Duration waitTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        return options.waitTime() != null ? options.waitTime() : config.defaultWaitTime();
    }

    private static UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException("Redlock supports the exclusive lock only (acquire, tryAcquire, execute, "
                + "lock, acquireAll), not " + what + ": use a RedisLockTemplate on a single Redis, Sentinel or Cluster for them");
    }

    private static Map<String, StringRedisTemplate> named(List<StringRedisTemplate> nodes) {
        Objects.requireNonNull(nodes, "nodes");
        Map<String, StringRedisTemplate> named = new LinkedHashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            named.put("node " + (i + 1), nodes.get(i));
        }
        return named;
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return task -> {
            Thread thread = new Thread(task, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** A node announced a release of {@code key} to this client: its waiting thread for the key tries again now. */
    private void wake(String key) {
        Local local = locals.get(key);
        if (local != null) {
            local.released();
        }
    }

    /** A node's subscription came up (again): announcements may have been missed, so every waiting thread tries again. */
    private void wakeAll() {
        locals.values().forEach(Local::released);
    }

    /** The in-memory queue of one key: threads of this JVM take the mutex before they go to the nodes. */
    private static final class Local {

        /**
         * Fair: a thread that releases and asks again at once queues behind the threads already waiting. Unfair, it
         * took the mutex straight back while the woken waiter was still being scheduled, and one thread of a JVM could
         * starve another for its whole wait (the fault suite saw a thread give up after 5 s while the other thread of
         * its JVM took the lock twelve times).
         */
        final ReentrantLock mutex = new ReentrantLock(true);
        /** Releases announced for the key; guarded by {@code announced} (not a monitor: no virtual-thread pinning). */
        private long releases;
        private final ReentrantLock announced = new ReentrantLock();
        private final java.util.concurrent.locks.Condition announcement = announced.newCondition();
        /** Threads holding or waiting for the key; guarded by the map's compute. */
        int users;
        volatile RedlockHandle holding;
        /** Why the last attempt on the nodes found a majority unreachable; {@code null} when it reached one. */
        volatile String unreachable;

        Local use() {
            users++;
            return this;
        }

        long releases() {
            announced.lock();
            try {
                return releases;
            } finally {
                announced.unlock();
            }
        }

        void released() {
            announced.lock();
            try {
                releases++;
                announcement.signalAll();
            } finally {
                announced.unlock();
            }
        }

        /** Waits until a release is announced after {@code seen} was read, or {@code nanos} passed. */
        void awaitRelease(long seen, long nanos) throws InterruptedException {
            announced.lock();
            try {
                for (long left = nanos; releases == seen && left > 0; ) {
                    left = announcement.awaitNanos(left);
                }
            } finally {
                announced.unlock();
            }
        }
    }
}
