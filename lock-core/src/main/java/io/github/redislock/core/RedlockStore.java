package io.github.redislock.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.LockScripts.ReleaseReply;
import io.github.redislock.core.RedlockNodes.Node;
import io.github.redislock.core.RedlockNodes.Replies;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The exclusive lock's {@link LockStore} over a quorum of independent masters (Redlock): every call goes to every
 * node at once ({@link RedlockNodes}) and settles once a majority answered it, the rest finishing in the background.
 * <p>
 * An acquisition holds when a majority granted it and time is left of its lease (validity = lease − the time it
 * took − the drift allowance, which is the engine's {@link LocalLock#safetyMarginNanos}); otherwise it is released
 * on the nodes and tried again after a random 10-30 ms, or at once when a node announces a release. The fencing token
 * is the highest of the majority's, written back to a majority's counters. A renewal that finds a node without
 * locks puts them back there (a node that restarted or was flushed), in one {@code redlock-repair-many.lua} call for
 * the batch, never after the holder's release began: a release
 * and a renewal of one owner are serialized node by node, so a late renewal cannot put back a released lock.
 * Restart detection (run_id marker and restart delay) is {@code acquire.lua}'s; see {@link RedlockTemplate}.
 */
final class RedlockStore implements LockStore {

    private static final Logger log = LoggerFactory.getLogger(RedlockStore.class);
    private static final RedisScript<Long> RAISE_FENCE = LockScripts.load("redlock-fence");
    private static final RedisScript<Long> MARK_NEW = LockScripts.load("redlock-mark");

    /**
     * How long a node's fencing counter keeps the last Redlock token. A later acquisition that reaches the node
     * within it gets a higher token from the counter; after it, from the node's clock (see {@link RedlockTemplate}).
     */
    static final Duration FENCE_MEMORY = Duration.ofMinutes(1);
    private static final long RETRY_MIN_MILLIS = 10;
    private static final long RETRY_MAX_MILLIS = 30;
    /** The shortest an attempt waits for replies, also when the wait time is (nearly) over. */
    private static final long MIN_REPLY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The least a release waits for the other nodes once a majority released the lock. */
    private static final long MIN_RELEASE_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final RedlockNodes nodes;
    private final RedisLockKeys keys;
    private final long nodeTimeoutNanos;
    /** The key each node keeps while it remembers its locks; see {@code acquire.lua}. */
    private final String restartMarker;
    private final long restartDelayMillis;
    private volatile boolean deploymentChecked;
    private final ReentrantLock checkingDeployment = new ReentrantLock();
    /** Until when (System.nanoTime) each node said it sits out its restart delay, so each delay is logged once. */
    private final Map<String, Long> restarting = new ConcurrentHashMap<>();
    /** Numbers the attempts, so each has an owner id of its own on the nodes. */
    private final java.util.concurrent.atomic.AtomicLong attempts = new java.util.concurrent.atomic.AtomicLong();
    /** This client's holdings by the engine's owner id, from the grant to the release. */
    private final Map<String, Holder> held = new ConcurrentHashMap<>();

    RedlockStore(RedlockNodes nodes, RedisLockKeys keys, long nodeTimeoutNanos, Duration restartDelay) {
        this.nodes = nodes;
        this.keys = keys;
        this.nodeTimeoutNanos = nodeTimeoutNanos;
        this.restartMarker = keys.prefix() + ":redlock-restart-marker";
        this.restartDelayMillis = restartDelay.toMillis();
    }

    /**
     * Every attempt has an owner id of its own on the nodes, so {@code attempt} changes nothing here: an attempt
     * that failed gives up its owner id on each node that did not answer it before it is released there, and a holding
     * does the same at its release, so its request landing late on such a node changes nothing.
     */
    @Override
    public AcquireReply acquire(String key, String holder, long leaseMillis, long sleepMillis, boolean registered,
            AttemptNumber attempt) {
        // an owner id of its own per attempt: a failed attempt's release still on its way to a node can never delete
        // a later attempt's grant there
        String owner = holder + ":" + attempts.incrementAndGet();
        checkForNewDeployment();
        int size = nodes.size();
        int quorum = nodes.quorum();
        long replyNanos = sleepMillis == 0 ? nodeTimeoutNanos
                : Math.min(nodeTimeoutNanos, Math.max(TimeUnit.MILLISECONDS.toNanos(sleepMillis), MIN_REPLY_NANOS));
        long start = System.nanoTime();
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        long validityNanos = leaseNanos - LocalLock.safetyMarginNanos(leaseNanos);
        long deadline = start + Math.min(replyNanos, Math.max(validityNanos, 0));
        long retryMillis = sleepMillis == 0 ? 0 : RETRY_MAX_MILLIS;
        // settled when a majority granted, refused (held by another owner) or failed; a split waits for the rest
        Replies<AcquireReply> grants = nodes.callAll(node -> noteRestart(node, node.scripts().redlockAcquire(key, owner,
                leaseMillis, retryMillis, registered, restartMarker, restartDelayMillis)), deadline,
                r -> r.count(AcquireReply::acquired) >= quorum || r.count(reply -> !reply.acquired()) >= quorum
                        || r.failed() >= quorum);
        String failure;
        boolean unreachable = false;
        if (grants.count(AcquireReply::acquired) < quorum) {
            // the replies still on their way, so the release that follows reaches each node after its grant
            grants.await(deadline, nodes::restStalled);
            long delayed = grants.count(AcquireReply::restarting);
            unreachable = grants.failed() + grants.pending() >= quorum;
            failure = grants.count(AcquireReply::acquired) + " of " + size + " Redis nodes granted it (a majority is "
                    + quorum + "), " + (grants.count(reply -> !reply.acquired()) - delayed) + " had it held by another owner"
                    + (delayed == 0 ? "" : ", " + delayed + " restarted or came back empty and grant nothing until their "
                            + "restart delay (redis-lock.redlock.restart-delay, " + restartDelayMillis + " ms) is over")
                    + grants.failures();
        } else {
            long token = grants.values().stream().filter(AcquireReply::acquired).mapToLong(AcquireReply::token).max()
                    .orElseThrow();
            List<String> counter = List.of(keys.fence(key));
            String memory = Long.toString(FENCE_MEMORY.toMillis());
            Replies<Long> raised = nodes.callAll(node -> node.redis().execute(RAISE_FENCE, counter, Long.toString(token),
                    memory), deadline, r -> r.values().size() >= quorum || r.failed() > size - quorum);
            long tookNanos = System.nanoTime() - start;
            if (raised.values().size() < quorum) {
                unreachable = true;
                failure = "only " + raised.values().size() + " of " + size + " Redis nodes recorded its fencing token "
                        + "(a majority is " + quorum + ")" + raised.failures();
            } else if (tookNanos >= validityNanos) {
                failure = "a majority granted it, but only after " + TimeUnit.NANOSECONDS.toMillis(tookNanos)
                        + " ms, when its lease of " + leaseMillis + " ms had (nearly) run out";
            } else {
                held.put(holder, new Holder(owner, () -> {
                    grants.await(deadline, nodes::restStalled);
                    return grants.unanswered();
                }));
                return new AcquireReply(token, 0);
            }
        }
        // released before the next attempt, so its grants hold up nobody, and on the nodes that did not answer too,
        // where the request may still land
        long granted = grants.count(AcquireReply::acquired);
        Set<String> unanswered = grants.unanswered();
        if (granted > 0) {
            release(key, owner, null, granted, replyNanos, unanswered);
        } else {
            nodes.inBackground(node -> {
                abandonIfUnanswered(node, unanswered, key, owner);
                return node.scripts().release(key, owner);
            });
        }
        if (unreachable) {
            throw new DataAccessResourceFailureException("a majority of the Redlock nodes could not be reached: " + failure);
        }
        log.debug("Redlock '{}' not acquired: {}", key, failure);
        return new AcquireReply(0, ThreadLocalRandom.current().nextLong(RETRY_MIN_MILLIS, RETRY_MAX_MILLIS + 1));
    }

    /** Releases on every node, also those that did not answer the acquisition (its request may still land there). */
    @Override
    public ReleaseReply release(String key, String holderId) {
        Holder holder = held.remove(holderId);
        LetGo letGo = LetGo.of(holder, holderId);
        long notOwner = nodes.size() - release(key, letGo.owner(), holder, nodes.size(), nodeTimeoutNanos,
                letGo.unanswered());
        return notOwner >= nodes.quorum() ? ReleaseReply.NOT_OWNER : ReleaseReply.RELEASED;
    }

    /**
     * Done waiting once {@code holders} nodes released it, every node answered, or a majority answered and the rest
     * stalled; once a majority released it, the rest are waited for at most as long again as that majority took (not
     * at all when they stalled), so a frozen or slow node holds up no release (its call still goes out). Each node's
     * release waits for a renewal still putting the lock back there.
     *
     * @param unanswered the nodes that did not answer the acquisition: the owner id is given up there first
     * @return how many nodes answered that {@code owner} held the lock there
     */
    private long release(String key, String owner, @Nullable Holder holder, long holders, long replyNanos,
            Set<String> unanswered) {
        long start = System.nanoTime();
        long deadline = start + replyNanos;
        long majority = Math.min(holders, nodes.quorum());
        Replies<Boolean> released = nodes.callAll(node -> {
            if (holder != null) {
                holder.awaitRepair(node.name(), deadline);
            }
            abandonIfUnanswered(node, unanswered, key, owner);
            return node.scripts().release(key, owner).wasOwner();
        }, deadline, r -> r.count(Boolean::booleanValue) >= majority
                || r.values().size() >= nodes.quorum() && nodes.restStalled(r));
        if (released.pending() > 0 && released.count(Boolean::booleanValue) >= majority) {
            long now = System.nanoTime();
            long grace = Math.max(now - start, MIN_RELEASE_GRACE_NANOS);
            released.await(Math.min(deadline, now + grace),
                    r -> r.count(Boolean::booleanValue) >= holders || nodes.restStalled(r));
        }
        long wasOwner = released.count(Boolean::booleanValue);
        long answered = released.values().size();
        return wasOwner + (nodes.size() - answered); // a node that did not answer is not taken for one that lost it
    }

    /**
     * The owner id on the nodes, and the nodes that never answered its acquisition; the holder lets go of it: no
     * renewal puts it back from now on.
     */
    private record LetGo(String owner, Set<String> unanswered) {

        static LetGo of(@Nullable Holder holder, String holderId) {
            return holder == null ? new LetGo(holderId, Set.of()) : new LetGo(holder.owner, holder.release());
        }
    }

    /**
     * Gives up {@code owner}'s acquisition on {@code node} if the node did not answer it: the request may still land
     * there, after the release, and would then take the lock for nobody (see {@code lib/stale.lua}).
     */
    private static void abandonIfUnanswered(Node node, Set<String> unanswered, String key, String owner) {
        if (unanswered.contains(node.name())) {
            node.scripts().abandon(key, owner);
        }
    }

    /**
     * Nothing to do: the engine's owner id never reaches a node, each attempt has one of its own, given up where it
     * may still land (see {@link #acquire}).
     */
    @Override
    public void abandon(String key, String holderId) {
    }

    /** Redlock hands nothing over: a release on some masters says nothing certain about the others. */
    @Override
    public boolean handsOver() {
        return false;
    }

    @Override
    public ReleaseReply releaseOrHandOver(String key, String owner, String nextOwner, long nextLeaseMillis,
            int reservedTokens, long nextSleepMillis) {
        return release(key, owner);
    }

    /**
     * Extends the lease on every node; a node that no longer holds it for the holder (restarted empty, say) is asked
     * to grant it again. Only renewals count towards the majority: a lock a majority lost is lost. As one of
     * {@link #renewMany()}, which is what the watchdog sends.
     *
     * @throws DataAccessResourceFailureException when neither a majority renewed it nor so many lost it that it is lost
     */
    @Override
    public boolean renew(String key, String holderId, long leaseMillis) {
        Renewer.Replies replies = renewMany().renew(List.of(key), List.of(holderId), new long[] {leaseMillis});
        if (replies.outcomes().charAt(0) == Renewer.Replies.NOT_ASKED) {
            throw Objects.requireNonNull(replies.failure());
        }
        return replies.outcomes().charAt(0) == Renewer.Replies.RENEWED;
    }

    /**
     * Renews many holdings in one {@code renew-many.lua} call per node at once, settled once a majority renewed or
     * lost each (a frozen node holds up none); a node that no longer has one is asked to grant it again.
     */
    @Override
    public Renewer.Many renewMany() {
        return (keyList, holderIds, leaseMillis) -> {
            int count = keyList.size();
            List<@Nullable Holder> holders = holderIds.stream().map(held::get).toList();
            List<String> owners = new java.util.ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                owners.add(holders.get(i) == null ? holderIds.get(i) : holders.get(i).owner);
            }
            long shortest = Long.MAX_VALUE;
            for (long lease : leaseMillis) {
                shortest = Math.min(shortest, lease);
            }
            Replies<String> replies = nodes.callAll(node -> {
                Renewer.Replies outcomes = node.scripts().renewMany().renew(keyList, owners, leaseMillis);
                repair(node, keyList, owners, leaseMillis, holders, outcomes.outcomes());
                return outcomes.outcomes();
            }, System.nanoTime() + renewalReplyNanos(shortest), r -> nodes.restStalled(r) || decided(r.values(), count));
            StringBuilder outcomes = new StringBuilder(count);
            for (int i = 0; i < count; i++) {
                outcomes.append(outcome(replies.values(), i));
            }
            boolean undecided = outcomes.indexOf(String.valueOf(Renewer.Replies.NOT_ASKED)) >= 0;
            return new Renewer.Replies(outcomes.toString(), undecided ? new DataAccessResourceFailureException(
                    "no majority of the " + nodes.size() + " Redis nodes renewed it or no longer held it (a majority is "
                            + nodes.quorum() + ")" + replies.failures()) : null);
        };
    }

    private boolean decided(List<String> replies, int count) {
        for (int i = 0; i < count; i++) {
            if (outcome(replies, i) == Renewer.Replies.NOT_ASKED) {
                return false;
            }
        }
        return true;
    }

    private char outcome(List<String> replies, int i) {
        int renewed = 0;
        int gone = 0;
        for (String reply : replies) {
            char outcome = reply.charAt(i);
            renewed += outcome == Renewer.Replies.RENEWED ? 1 : 0;
            gone += outcome == Renewer.Replies.GONE ? 1 : 0;
        }
        return renewed >= nodes.quorum() ? Renewer.Replies.RENEWED
                : gone > nodes.size() - nodes.quorum() ? Renewer.Replies.GONE : Renewer.Replies.NOT_ASKED;
    }

    private long renewalReplyNanos(long leaseMillis) {
        return Math.min(nodeTimeoutNanos, TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 4);
    }

    /**
     * Puts the holders' locks back on a node whose renewal found them gone ({@code outcomes}), where they are free
     * there (also on a node sitting out its restart delay: the holders' leases are still valid), unless a holder
     * began releasing its lock; in one call for the batch. What is put back counts at the next renewal, not this one:
     * a lock a majority lost is lost.
     */
    private void repair(Node node, List<String> keys, List<String> owners, long[] leaseMillis, List<@Nullable Holder> holders,
            String outcomes) {
        List<Integer> gone = new java.util.ArrayList<>();
        for (int i = 0; i < outcomes.length(); i++) {
            Holder holder = holders.get(i);
            if (outcomes.charAt(i) == Renewer.Replies.GONE && holder != null && holder.startRepair(node.name())) {
                gone.add(i);
            }
        }
        if (gone.isEmpty()) {
            return;
        }
        try {
            node.scripts().redlockRepairMany(gone.stream().map(keys::get).toList(), gone.stream().map(owners::get).toList(),
                    gone.stream().map(i -> leaseMillis[i]).toList(), restartMarker, restartDelayMillis);
        } catch (RuntimeException e) {
            log.debug("Could not put {} locks back on Redlock node {}; the next renewal tries again", gone.size(),
                    node.name(), e);
        } finally {
            gone.forEach(i -> holders.get(i).endRepair(node.name()));
        }
    }

    /**
     * A fixed lease on every node, for the same holder (Redlock hands nothing over, so nothing asks for another);
     * held when a majority set it.
     */
    @Override
    public boolean setLease(String key, String holderId, String newHolderId, long leaseMillis) {
        if (!holderId.equals(newHolderId)) {
            throw new UnsupportedOperationException("Redlock hands nothing over");
        }
        Holder holder = held.get(holderId);
        String owner = holder == null ? holderId : holder.owner;
        return setOnQuorum(node -> node.scripts().setLease(key, owner, owner, leaseMillis),
                System.nanoTime() + nodeTimeoutNanos);
    }

    /**
     * The minimum hold ({@code holdAtLeast}) on every node, under an owner id no renewal names; held when a majority
     * set it. As a release does, each node's call waits for a renewal still putting the lock back there, which would
     * otherwise leave it there under the holder's owner id for a whole lease.
     */
    @Override
    public boolean holdUntilExpiry(String key, String holderId, long holdMillis) {
        Holder holder = held.remove(holderId);
        LetGo letGo = LetGo.of(holder, holderId);
        long deadline = System.nanoTime() + nodeTimeoutNanos;
        return setOnQuorum(node -> {
            if (holder != null) {
                holder.awaitRepair(node.name(), deadline);
            }
            abandonIfUnanswered(node, letGo.unanswered(), key, letGo.owner());
            return node.scripts().holdUntilExpiry(key, letGo.owner(), holdMillis);
        }, deadline);
    }

    private boolean setOnQuorum(Function<Node, Boolean> call, long deadlineNanos) {
        Replies<Boolean> set = nodes.callAll(call, deadlineNanos,
                r -> r.count(Boolean::booleanValue) >= nodes.quorum() || nodes.restStalled(r));
        return set.count(Boolean::booleanValue) >= nodes.quorum();
    }

    /** Withdraws this client from the waiting clients on every node (an entry a node missed expires on its own). */
    @Override
    public void leave(String key) {
        nodes.callAll(node -> {
            node.scripts().leave(key);
            return Boolean.TRUE;
        }, System.nanoTime() + MIN_REPLY_NANOS, nodes::restStalled);
    }

    /** No turn is kept for Redlock's waiters to look at: they try again every 10-30 ms. */
    @Override
    public long turnEnded(String key) {
        return 0;
    }

    /**
     * On this client's first acquisition that reaches a node: when every node answers and none has its restart
     * marker, this is a new deployment (or every node restarted empty at once, which looks the same), and the nodes
     * are marked as remembering their locks, so they grant at once. Otherwise a node without its marker sits out the
     * restart delay from the first acquisition that reaches it ({@code acquire.lua}), and a client that has seen the
     * deployment before never takes it for new.
     */
    private void checkForNewDeployment() {
        if (deploymentChecked) {
            return;
        }
        checkingDeployment.lock();
        try {
            if (deploymentChecked) {
                return;
            }
            Replies<Boolean> marked = nodes.callAll(node -> Boolean.TRUE.equals(node.redis().hasKey(restartMarker)),
                    System.nanoTime() + nodeTimeoutNanos, RedlockNodes::everyAnswer);
            // no node answered (none up yet, say): nothing learnt and nothing marked, so look again next time
            deploymentChecked = !marked.values().isEmpty();
            if (marked.values().size() == nodes.size() && marked.count(Boolean::booleanValue) == 0) {
                // redlock-mark.lua, with each node process's run_id (so that a restart from persisted data is told
                // apart), only where no marker is: a node another client's acquisition reached meanwhile keeps its delay
                nodes.callAll(node -> node.redis().execute(MARK_NEW, List.of(restartMarker)),
                        System.nanoTime() + nodeTimeoutNanos, RedlockNodes::everyAnswer);
                log.info("Redlock nodes {} have no restart marker: a new deployment, marked to grant at once", nodes.names());
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
                log.warn("Redlock node {} restarted (also from persisted data), came back empty (flushed) or is new: it "
                        + "grants no lock for {} ms more, until every lock it may have held has expired "
                        + "(redis-lock.redlock.restart-delay)", node.name(), reply.restartDelayLeftMillis());
            }
        }
        return reply;
    }

    /**
     * One granted holding: the replies of its acquisition still on their way (a release must not overtake a late
     * grant), and its renewals putting it back on a node, which its release waits for on that node.
     */
    private static final class Holder {

        /** The owner id the lock has on the nodes: the holder's, with its attempt's number. */
        final String owner;
        /** Waits for the acquisition's replies still on their way; then names the nodes that never answered. */
        private Supplier<Set<String>> lateGrants;
        private boolean released;
        private final Map<String, Integer> repairs = new HashMap<>();

        Holder(String owner, Supplier<Set<String>> lateGrants) {
            this.owner = owner;
            this.lateGrants = lateGrants;
        }

        /**
         * The holder's release began: no renewal puts the lock back from now on. Waits for the late grants.
         *
         * @return the nodes that did not answer the acquisition: its request may still land there
         */
        Set<String> release() {
            synchronized (this) {
                released = true;
            }
            Set<String> unanswered = lateGrants.get();
            lateGrants = () -> unanswered;
            return unanswered;
        }

        synchronized boolean startRepair(String node) {
            if (released) {
                return false;
            }
            repairs.merge(node, 1, Integer::sum);
            return true;
        }

        synchronized void endRepair(String node) {
            repairs.merge(node, -1, Integer::sum);
            notifyAll();
        }

        /** Waits (on the node's own thread) until no renewal puts the lock back on {@code node}, or the deadline. */
        synchronized void awaitRepair(String node, long deadlineNanos) {
            try {
                for (long left; repairs.getOrDefault(node, 0) > 0 && (left = deadlineNanos - System.nanoTime()) > 0; ) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
