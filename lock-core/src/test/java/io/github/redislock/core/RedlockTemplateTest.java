package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Await;
import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/** Redlock over five independent redis-server masters, all of them up. */
@WithRedisNodes(5)
class RedlockTemplateTest {

    RedisNodes nodes;
    RedlockClients clients;
    String key;

    @BeforeEach
    void connect(TestInfo test) {
        clients = new RedlockClients(nodes);
        key = "redlock:" + test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void close() {
        clients.close();
    }

    /** One critical section: who was in it, when, with which token, and what it read and wrote. */
    record Section(long enter, long exit, long token) {
    }

    @Test
    void aClosedTemplateRefusesNewLocksNamingTheKey() {
        RedlockTemplate closing = clients.template();

        closing.close();

        assertThatThrownBy(() -> closing.acquire(key, LockOptions.tryOnce()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("RedlockTemplate is closed")
                .hasMessageContaining("'" + key + "'");
        assertThat(clients.template().tryAcquire(key, LockOptions.tryOnce())).as("nothing taken once closed").isPresent()
                .get().satisfies(LockHandle::release);
    }

    @Test
    void aLockHeldAcrossTheCloseIsStillReleased() {
        RedlockTemplate closing = clients.template();
        LockHandle held = closing.acquire(key, LockOptions.tryOnce());
        LockHandle heldAtLeast = closing.acquire(key + ":hold-at-least",
                LockOptions.tryOnce().withHoldAtLeast(Duration.ofMillis(300)));

        closing.close();
        held.release(); // a method that ran across the close still gives its lock back
        heldAtLeast.release();

        RedlockTemplate other = clients.template();
        assertThat(other.tryAcquire(key, LockOptions.tryOnce())).as("free at once, not at lease end")
                .isPresent().get().satisfies(LockHandle::release);
        assertThat(other.tryAcquire(key + ":hold-at-least", LockOptions.tryOnce())).as("within its minimum hold")
                .isEmpty();
        assertThat(other.tryAcquire(key + ":hold-at-least", LockOptions.waitFor(Duration.ofSeconds(2))))
                .as("after its minimum hold").isPresent().get().satisfies(LockHandle::release);
    }

    @Test
    void onlyOneClientAtATimeHoldsTheLockAcrossClientsAndThreads() throws Exception {
        int clientCount = 4;
        int threadsPerClient = 2;
        int rounds = 15;
        List<RedlockTemplate> templates = new ArrayList<>();
        for (int i = 0; i < clientCount; i++) {
            templates.add(clients.template());
        }
        long[] counter = {0}; // read-sleep-write, deliberately not atomic: two holders at once lose an increment
        Collection<Section> sections = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(clientCount * threadsPerClient);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (RedlockTemplate template : templates) {
                for (int t = 0; t < threadsPerClient; t++) {
                    done.add(pool.submit(() -> {
                        for (int r = 0; r < rounds; r++) {
                            template.execute(key, LockOptions.waitFor(Duration.ofSeconds(60)), handle -> {
                                long enter = System.nanoTime();
                                long read = counter[0];
                                Thread.sleep(1);
                                counter[0] = read + 1;
                                sections.add(new Section(enter, System.nanoTime(), handle.fencingToken()));
                                return null;
                            });
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> future : done) {
                future.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        int total = clientCount * threadsPerClient * rounds;
        assertThat(counter[0]).isEqualTo(total);
        List<Section> ordered = new ArrayList<>(sections);
        ordered.sort(Comparator.comparingLong(Section::enter));
        for (int i = 1; i < ordered.size(); i++) {
            Section before = ordered.get(i - 1);
            Section after = ordered.get(i);
            assertThat(after.enter()).as("section %d entered before section %d left", i, i - 1).isGreaterThan(before.exit());
            assertThat(after.token()).as("fencing token of section %d", i).isGreaterThan(before.token());
        }
    }

    @Test
    void aThreadThatReleasesAndAsksAgainAtOnceQueuesBehindTheThreadOfItsJvmAlreadyWaiting() throws Exception {
        RedlockTemplate template = clients.template();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        try {
            LockHandle first = template.acquire(key, LockOptions.tryOnce());
            Future<?> other = pool.submit(() -> {
                try (LockHandle handle = template.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    order.add("waiting thread");
                }
                return null;
            });
            Await.until(() -> template.queuedThreads(key) == 1, Duration.ofSeconds(10), "the other thread to queue");
            first.close();
            // asks again at once, as a worker loop does: it must not take the key back from the waiting thread
            try (LockHandle again = template.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                order.add("releasing thread");
            }
            other.get(30, TimeUnit.SECONDS);
            assertThat(order).containsExactly("waiting thread", "releasing thread");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theLockIsHeldOnEveryNodeAndItsTokenIsRecordedInEveryNodesCounter() throws InterruptedException {
        RedlockTemplate template = clients.template();
        try (LockHandle handle = template.acquire(key, LockOptions.tryOnce())) {
            for (RedisServerProcess node : nodes.nodes()) {
                // held once a majority granted: the other nodes' grants may still be on their way
                Await.until(() -> String.valueOf(node.command("GET", "redis-lock:{" + key + "}")).startsWith(template.clientId()),
                        Duration.ofSeconds(5), "the lock granted on node " + node.port());
                // a node whose grant came after the majority's counts on from its own, higher token (the token's
                // write-back is acknowledged by a majority; the other nodes' may still be on their way too)
                Await.until(() -> Long.parseLong(String.valueOf(node.command("GET", "redis-lock:{" + key + "}:fence")))
                        >= handle.fencingToken(), Duration.ofSeconds(5), "the token recorded on node " + node.port());
            }
        }
        for (RedisServerProcess node : nodes.nodes()) {
            assertThat(node.command("EXISTS", "redis-lock:{" + key + "}")).isEqualTo("0");
        }
    }

    @Test
    void aWaitingClientListensForReleasesOnEveryNodeAndTakesTheLockWhenItIsReleased() throws Exception {
        RedlockTemplate first = clients.template();
        RedlockTemplate second = clients.template();
        LockHandle held = first.acquire(key, LockOptions.tryOnce());
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Future<Long> next = waiter.submit(() -> {
                try (LockHandle handle = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    return handle.fencingToken();
                }
            });
            String channel = "redis-lock:wake:" + second.clientId();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (RedisServerProcess node : nodes.nodes()) {
                // each node announces its releases to the waiting client on the client's channel: it must listen there
                // (and be registered there as waiting, which is whom a release announces itself to)
                while (!node.command("PUBSUB", "NUMSUB", channel).endsWith("1")
                        || node.command("ZSCORE", "redis-lock:{" + key + "}:waiters", second.clientId()) == null) {
                    assertThat(System.nanoTime()).as("subscribed and registered on " + node.port()).isLessThan(deadline);
                    Thread.sleep(10);
                }
            }
            assertThat(next).isNotDone();
            held.release();
            assertThat(next.get(10, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
        } finally {
            waiter.shutdownNow();
        }
    }

    @Test
    void aLaterPartialGrantDoesNotShortenTheFencingCounterKeptForTheFenceMemory() throws InterruptedException {
        RedlockTemplate template = clients.template();
        String lockKey = "redis-lock:{" + key + "}";
        String counter = lockKey + ":fence";
        long token;
        try (LockHandle handle = template.acquire(key, LockOptions.tryOnce())) {
            token = handle.fencingToken();
        }
        for (RedisServerProcess node : nodes.nodes()) {
            Await.until(() -> Long.parseLong(String.valueOf(node.command("GET", counter))) >= token, Duration.ofSeconds(5),
                    "the token recorded on node " + node.port());
        }
        // nodes 0 to 2 have it held by another owner: the next attempt is granted on nodes 3 and 4 only, and given back
        for (int i = 0; i < 3; i++) {
            nodes.node(i).command("SET", lockKey, "another-owner", "PX", "60000");
        }
        assertThat(template.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        long memory = RedlockStore.FENCE_MEMORY.toMillis();
        for (int i = 0; i < 5; i++) {
            long ttl = Long.parseLong(nodes.node(i).command("PTTL", counter));
            assertThat(ttl).as("the fencing counter's TTL on node %d after a partial grant", i)
                    .isGreaterThan(memory - LockScripts.FENCE_GRACE_MILLIS * 10);
        }
        for (int i = 0; i < 3; i++) {
            nodes.node(i).command("DEL", lockKey);
        }
    }

    @Test
    void aSecondClientIsRefusedWhileTheFirstHoldsTheLockAndGetsAHigherTokenAfter() {
        RedlockTemplate first = clients.template();
        RedlockTemplate second = clients.template();
        // a wait, not one try: on a loaded machine all five nodes once answered nothing for 200 ms, taken for frozen
        LockHandle held = first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(5)));
        assertThat(second.tryAcquire(key, LockOptions.waitFor(Duration.ofMillis(200)))).isEmpty();
        assertThatThrownBy(() -> second.acquire(key, LockOptions.tryOnce())).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining(key).hasMessageContaining("held by another owner");
        held.release();
        try (LockHandle next = second.acquire(key, LockOptions.tryOnce())) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void theHoldingThreadReentersWithoutAnotherAcquisitionAndReleasesWithTheOutermostHold() {
        RedlockTemplate template = clients.template();
        RedlockTemplate other = clients.template();
        LockHandle outer = template.acquire(key, LockOptions.tryOnce());
        LockHandle inner = template.acquire(key, LockOptions.tryOnce());
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        inner.release();
        assertThat(outer.isHeld()).isTrue();
        assertThat(other.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        outer.release();
        assertThat(template.diagnostics().localLockCount()).isZero();
        assertThat(template.diagnostics().scheduledRenewalCount()).isZero();
        assertThat(other.tryAcquire(key, LockOptions.tryOnce())).hasValueSatisfying(LockHandle::release);
    }

    @Test
    void theLockViewIsReentrantAndExcludesOtherClients() {
        RedlockTemplate template = clients.template();
        RedlockTemplate other = clients.template();
        java.util.concurrent.locks.Lock lock = template.lock(key);
        lock.lock();
        lock.lock();
        lock.unlock();
        assertThat(other.lock(key).tryLock()).isFalse();
        lock.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        java.util.concurrent.locks.Lock otherLock = other.lock(key);
        assertThat(otherLock.tryLock()).isTrue();
        otherLock.unlock();
    }

    @Test
    void acquisitionGoesToEveryNodeAtOnceSoItCostsAboutOneRoundTripNotOnePerNode() {
        long delayMillis = 100;
        RedlockTemplate slow = clients.template(RedisLockConfig.defaults(), client -> new DelayedScripts(client, delayMillis));
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long start = System.nanoTime();
            LockHandle handle = slow.acquire(key, LockOptions.tryOnce());
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            handle.release();
            best = Math.min(best, took);
        }
        // an acquisition is two parallel rounds (acquire, then record the token): about 2 delays; one after another
        // it would be 2 * 5 = 10 delays
        System.out.println("Redlock acquisition on 5 nodes, each call delayed " + delayMillis + " ms: " + best + " ms (best of 3)");
        assertThat(best).isGreaterThanOrEqualTo(2 * delayMillis).isLessThan(5 * delayMillis);
    }

    @Test
    void itIsALockOperationsWithoutTheLockTypesOnlyOneRedisCanServe() {
        assertThat(LockOperations.class).isAssignableFrom(RedlockTemplate.class);
        assertThat(java.util.Arrays.stream(RedlockTemplate.class.getMethods()).map(java.lang.reflect.Method::getName))
                .doesNotContain("fairLock", "readWriteLock", "semaphore");
    }

    @Test
    void anEvenNumberOrFewerThanThreeNodesIsRefused() {
        Map<String, StringRedisTemplate> four = new LinkedHashMap<>(clients.clients());
        four.remove(four.keySet().iterator().next());
        assertThatThrownBy(() -> new RedlockTemplate(four, RedisLockConfig.defaults(), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("odd number").hasMessageContaining("4");
        assertThatThrownBy(() -> new RedlockTemplate(List.of(), RedisLockConfig.defaults()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 3");
    }

    @Test
    void acquireAllTakesEveryKeyOnTheNodes() {
        RedlockTemplate template = clients.template();
        RedlockTemplate other = clients.template();
        try (MultiLockHandle both = template.acquireAll(List.of(key + ":b", key + ":a"), LockOptions.tryOnce())) {
            assertThat(both.keys()).containsExactly(key + ":a", key + ":b");
            Optional<MultiLockHandle> refused = other.tryAcquireAll(List.of(key + ":a"), LockOptions.tryOnce());
            assertThat(refused).isEmpty();
        }
    }

    /** Real Redis, every script call delayed first: a node far away. */
    static final class DelayedScripts extends StringRedisTemplate {

        private final StringRedisTemplate delegate;
        private final long delayMillis;

        DelayedScripts(StringRedisTemplate delegate, long delayMillis) {
            super(delegate.getRequiredConnectionFactory());
            this.delegate = delegate;
            this.delayMillis = delayMillis;
        }

        @Override
        public <T> T execute(RedisScript<T> script, List<String> keys, Object... args) {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return delegate.execute(script, keys, args);
        }
    }
}
