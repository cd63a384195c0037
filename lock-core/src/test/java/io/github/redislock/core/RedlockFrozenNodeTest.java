package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.redislock.test.Await;
import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Redlock with many held locks while one of five masters is frozen (SIGSTOP: its connections stay open, nothing is
 * answered): the watchdog's batched renewals and every release settle once a majority answered, so no lock held on
 * the healthy majority is lost and no release waits for the frozen node. (Before Redlock ran on the shared engine,
 * one thread renewed each lock in turn, waiting for every node: 26 of 30 locks with a 6 s lease were lost within
 * 15 s of one master freezing, and a release took the node timeout.)
 */
@WithRedisNodes(value = 5, freshForEachTest = true)
class RedlockFrozenNodeTest {

    private static final int LOCKS = 1000;

    RedisNodes nodes;
    RedlockClients clients;

    @BeforeEach
    void connect() {
        clients = new RedlockClients(nodes);
    }

    @AfterEach
    void close() {
        nodes.node(4).resume();
        clients.close();
    }

    @Test
    void manyHeldLocksKeepTheirHealthyMajorityAndReleasePromptlyWhileANodeIsFrozen() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        RedlockTemplate template = clients.template(RedisLockConfig.defaults().withWatchdogLease(lease));
        List<String> lost = lostLocks(template);
        List<LockHandle> held = acquireAll(template, "frozen:");
        RedisServerProcess frozen = nodes.node(4);
        frozen.pause();
        long frozenAt = System.nanoTime();
        Thread.sleep(lease.toMillis() * 3 / 2); // one and a half leases: only renewals on the healthy nodes keep them

        long notHeld = held.stream().filter(handle -> !handle.isHeld()).count();
        assertThat(notHeld).as("locks no longer held %s ms after node 4 froze (lost: %s)",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt), lost.stream().limit(3).toList()).isZero();
        assertThat(lost).isEmpty();
        String[] lockKeys = lockKeys(held);
        for (int n = 0; n < 4; n++) {
            assertThat(LOCKS - ownedBy(nodes.node(n), lockKeys, template.clientId()))
                    .as("locks node %d no longer holds for this client", n).isZero();
        }

        long slowest = 0;
        long start = System.nanoTime();
        for (LockHandle handle : held) {
            long before = System.nanoTime();
            handle.release();
            slowest = Math.max(slowest, System.nanoTime() - before);
        }
        long allMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println(LOCKS + " Redlock releases with one of five nodes frozen took " + allMs + " ms, the slowest "
                + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms");
        // a release waits for a majority, never for the frozen node (the node timeout is 1 s)
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowest)).as("the slowest release, in ms").isLessThan(500);
        // a release returns once a majority deleted its lock; the fourth healthy node's deletes follow
        for (int n = 0; n < 4; n++) {
            RedisServerProcess node = nodes.node(n);
            Await.until(() -> "0".equals(node.command(prepend("EXISTS", lockKeys))), Duration.ofSeconds(5),
                    "no lock left on node " + n);
        }
    }

    /**
     * A master that forgot the held locks (flushed) freezes while the watchdog puts them back, batch by batch: the
     * put-backs then wait on that node like its renewals, the locks keep their healthy majority meanwhile (none lost,
     * none granted to another client), and once the node answers again the put-back completes and every lock is back
     * on it. After release-all nothing is left on any node: a put-back that waited through the freeze does not bring
     * a released lock back.
     */
    @Test
    void aNodeFrozenWhileTheWatchdogPutsItsForgottenLocksBackGetsThemAllOnceItAnswersAgain() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        RedlockTemplate template = clients.template(RedisLockConfig.defaults().withWatchdogLease(lease));
        RedlockTemplate contender = clients.template(RedisLockConfig.defaults().withWatchdogLease(lease));
        List<String> lost = lostLocks(template);
        List<LockHandle> held = acquireAll(template, "putback:");
        String[] lockKeys = lockKeys(held);
        RedisServerProcess node = nodes.node(4);
        node.command("FLUSHALL");
        long back;
        do { // freeze it as soon as the put-back has begun
            back = Long.parseLong(node.command(prepend("EXISTS", lockKeys)));
        } while (back == 0);
        node.pause();
        long frozenAt = System.nanoTime();
        System.out.println("node 4 frozen with " + back + " of " + LOCKS + " forgotten locks put back");

        Thread.sleep(lease.toMillis() * 3 / 2); // only the healthy nodes' renewals keep the locks now
        assertThat(held.stream().filter(handle -> !handle.isHeld()).count()).as("locks no longer held %s ms after node 4 "
                + "froze (lost: %s)", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt),
                lost.stream().limit(3).toList()).isZero();
        for (int i = 0; i < LOCKS; i += LOCKS / 50) {
            assertThat(contender.tryAcquire("putback:" + i, LockOptions.tryOnce())).as("a second holder of putback:" + i)
                    .isEmpty();
        }

        node.resume();
        long resumedAt = System.nanoTime();
        // the contender's tries queued on the frozen node too: run once it answers, on keys not put back yet, they grant
        // that node alone to a contender that gave up on them long before (a minority, which holds up nobody); its
        // releases of them reached the node no sooner, so such a grant ends with its lease and the put-back follows
        Await.until(() -> ownedBy(node, lockKeys, template.clientId()) == LOCKS, lease.plusSeconds(5),
                "every lock back on node 4, as the holder's, after it answered again");
        System.out.println("all " + LOCKS + " locks back on node 4 " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime()
                - resumedAt) + " ms after it answered again");
        assertThat(lost).isEmpty();

        held.forEach(LockHandle::release);
        for (int n = 0; n < 5; n++) {
            RedisServerProcess each = nodes.node(n);
            Await.until(() -> "0".equals(each.command(prepend("EXISTS", lockKeys))), Duration.ofSeconds(5),
                    "no lock left on node " + n);
        }
    }

    /**
     * Each node's calls run on no more threads than its pooled Jedis client has connections (8 here). With more (64
     * threads per node before), the threads beyond the pool's size waited for a connection, and commons-pool's
     * waiting borrowers spin on the CPU while a connection is being made; to a frozen node that is all the time (each
     * call times out, its connection is dropped and made again), so a frozen master kept the client's CPUs busy and
     * slowed every lock (the fault run's scenario, 10,000 Redlock locks with a master frozen 45 s: 76 s of client CPU
     * from the freeze to the end of the releases before, 10 s after).
     */
    @Test
    void callsPilingUpForAFrozenNodeNeverWaitForAPooledConnection() throws Exception {
        // Jedis's default pool (8 connections), as Spring Boot and redis-lock.redlock.nodes set it up
        Map<String, StringRedisTemplate> defaultPools = new LinkedHashMap<>();
        List<JedisConnectionFactory> factories = new ArrayList<>();
        for (RedisServerProcess node : nodes.nodes()) {
            JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(node.host(),
                    node.port()), JedisClientConfiguration.builder().readTimeout(Duration.ofMillis(500)).usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            factories.add(factory);
            defaultPools.put(node.host() + ":" + node.port(), new StringRedisTemplate(factory));
        }
        RedlockTemplate template = new RedlockTemplate(defaultPools, RedisLockConfig.defaults(), Duration.ofMillis(500));
        nodes.node(4).pause();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService callers = Executors.newFixedThreadPool(32);
        try {
            for (int t = 0; t < 32; t++) {
                int thread = t;
                callers.submit(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        template.tryAcquire("pile:" + thread + ":" + i, LockOptions.tryOnce()).ifPresent(LockHandle::release);
                    }
                    return null;
                });
            }
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            int mostWaiting = 0;
            List<String> seenAtMost = List.of(); // the waiting threads' stacks when most waited, for a failure's message
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < until) {
                List<String> waiting = new ArrayList<>();
                for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
                    if (info.getThreadName().startsWith("redis-lock-redlock-") && waitsForPooledConnection(info)) {
                        waiting.add(info.getThreadName() + " " + Arrays.stream(info.getStackTrace()).limit(12)
                                .map(StackTraceElement::toString).toList());
                    }
                }
                if (waiting.size() > mostWaiting) {
                    mostWaiting = waiting.size();
                    seenAtMost = waiting;
                }
                Thread.sleep(20);
            }
            // a thread caught on its way through the pool's create() is no wait; two at once would be
            assertThat(mostWaiting).as("Redlock call threads waiting for a pooled connection at once: %s", seenAtMost)
                    .isLessThanOrEqualTo(1);
        } finally {
            stop.set(true);
            callers.shutdown();
            assertThat(callers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
            template.close();
            factories.forEach(JedisConnectionFactory::destroy);
        }
    }

    /**
     * Waiting in the pool's borrow for a connection to come back (on the idle queue's condition, not merely for its
     * lock), or in its create() without making the connection itself (makeObject): spinning until another thread's
     * connection is made.
     */
    static boolean waitsForPooledConnection(ThreadInfo info) {
        boolean awaiting = false;
        for (StackTraceElement frame : info.getStackTrace()) { // innermost first
            if (frame.getMethodName().equals("makeObject")) {
                return false;
            }
            if (frame.getClassName().equals("org.apache.commons.pool2.impl.GenericObjectPool")) {
                return frame.getMethodName().equals("create") || frame.getMethodName().equals("borrowObject") && awaiting;
            }
            awaiting |= frame.getClassName().endsWith("$ConditionObject");
        }
        return false;
    }

    /** Reasons the template gives for each lock it reports lost. */
    private static List<String> lostLocks(RedlockTemplate template) {
        List<String> lost = new CopyOnWriteArrayList<>();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
        return lost;
    }

    /** {@link #LOCKS} locks on the keys {@code prefix} 0, 1, ..., held with the watchdog. */
    private static List<LockHandle> acquireAll(RedlockTemplate template, String prefix) {
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            held.add(template.acquire(prefix + i, LockOptions.tryOnce()));
        }
        return held;
    }

    private static String[] lockKeys(List<LockHandle> held) {
        return held.stream().map(handle -> "redis-lock:{" + handle.key() + "}").toArray(String[]::new);
    }

    /** How many of {@code lockKeys} {@code node} holds for {@code clientId}. */
    private static long ownedBy(RedisServerProcess node, String[] lockKeys, String clientId) {
        return java.util.Arrays.stream(node.command(prepend("MGET", lockKeys)).split("\n", -1))
                .filter(value -> value.startsWith(clientId)).count();
    }

    private static String[] prepend(String command, String[] args) {
        String[] all = new String[args.length + 1];
        all[0] = command;
        System.arraycopy(args, 0, all, 1, args.length);
        return all;
    }
}
