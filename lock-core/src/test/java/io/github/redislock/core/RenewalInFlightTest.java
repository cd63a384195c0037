package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A renewer stalls: the watchdog's renewal of a held lock is stuck on its connection (behind a proxy, as a lost packet
 * leaves it until the driver's timeout) while the holder releases the lock and the next holder takes it, and reaches
 * Redis only after that. It must change nothing it was not sent for: not the next holder's lock, of any lock type,
 * which stays held and renewed with no loss reported; not a minimum hold ({@code holdAtLeast}) the release left, which
 * must still end when it said; not the fixed lease of a thread that took a handed-over lock.
 */
@WithRedis(freshForEachTest = true)
class RenewalInFlightTest {

    /** Renewed at the first look a quarter of it after the last renewal: about half a second after the acquisition. */
    private static final Duration LEASE = Duration.ofSeconds(2);
    /** Far longer than a renewal is held back: the stuck call waits for the proxy, not for its driver's timeout. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(20);

    RedisServerProcess server;

    @Test
    void aMinimumHoldTheReleaseLeftStillEndsWhenItSaidAfterARenewalSentBeforeTheReleaseReachesRedis() throws Exception {
        String key = "in-flight:minimum-hold";
        try (StallingProxy proxy = new StallingProxy(server.port()); Client client = new Client(proxy)) {
            ScriptCalls.load(server, LockScripts.RENEW_MANY); // so the held-back call runs as it lands
            proxy.stallNextRequestContaining(LockScripts.RENEW_MANY.getSha1());
            LockHandle handle = client.locks.acquire(key, LockOptions.tryOnce().withHoldAtLeast(Duration.ofMillis(1500)));
            assertThat(proxy.awaitStalled(10_000)).as("the watchdog's renewal is stuck on its way").isTrue();

            handle.release(); // within the minimum hold: the lock stays in Redis until it ends, with no holder
            long leftMillis = pttl(key);
            assertThat(leftMillis).as("the minimum hold left in Redis").isBetween(1L, 1_500L);

            long scriptCalls = ScriptCalls.ran(server);
            proxy.release(); // the renewal sent for the released holding reaches Redis now
            ScriptCalls.awaitAbove(server, scriptCalls, "the held-back renewal reaches Redis");

            assertThat(pttl(key)).as("the lock's time left once the renewal sent before the release ran (its lease: %d ms)",
                    LEASE.toMillis()).isBetween(1L, leftMillis);
            assertThat(client.losses).isEmpty();
        }
    }

    /**
     * Every lock type: the renewal of the first holding is held back, the first holder releases to a thread of the same
     * client that waits for the lock (a hand-over where the type makes one: in Redis for the exclusive lock, a grant for
     * the fair lock, in the release's call for the semaphore; the writer asks; a second reader opens a share of its own
     * after the first one closed), and only then does the renewal reach Redis, which answers that its holding is gone.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(LockType.class)
    void theNextHolderStaysHeldAndRenewedAfterTheEarlierHoldersRenewalReachesRedisLate(LockType type) throws Exception {
        String key = "in-flight:next-holder:" + type;
        Thread[] nextThread = new Thread[1];
        ExecutorService next = Executors.newSingleThreadExecutor(task -> nextThread[0] = new Thread(task, "next-holder"));
        try (StallingProxy proxy = new StallingProxy(server.port()); Client client = new Client(proxy)) {
            ScriptCalls.load(server, renewalScript(type)); // so the held-back call runs as it lands
            proxy.stallNextRequestContaining(renewalScript(type).getSha1());
            LockHandle first = LockTypes.acquire(client.locks, type, key, LockOptions.tryOnce());
            assertThat(proxy.awaitStalled(10_000)).as("the watchdog's renewal is stuck on its way").isTrue();

            Future<LockHandle> taken;
            if (type == LockType.READ) { // a reader waiting would join the first one's share
                first.release();
                taken = next.submit(() -> LockTypes.acquire(client.locks, type, key, LockOptions.tryOnce()));
            } else {
                taken = next.submit(() -> LockTypes.acquire(client.locks, type, key,
                        LockOptions.waitFor(Duration.ofSeconds(20))));
                awaitWaiting(nextThread);
                first.release();
            }
            LockHandle second = taken.get(10, TimeUnit.SECONDS);
            if (type != LockType.READ) { // readers of one read epoch share its token
                assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            }

            long scriptCalls = ScriptCalls.ran(server);
            proxy.release(); // the first holding's renewal reaches Redis: its holding is gone, it answers "not held"
            ScriptCalls.awaitAbove(server, scriptCalls, "the held-back renewal reaches Redis");

            // hold it past a whole lease: renewed all along (else its lease runs out and it is lost), never reported lost
            long until = System.nanoTime() + LEASE.toNanos() * 3 / 2;
            while (System.nanoTime() < until) {
                assertThat(next.submit(second::isHeld).get(5, TimeUnit.SECONDS)).as("the next holder holds it").isTrue();
                Thread.sleep(100);
            }
            assertThat(client.losses).as("losses reported").isEmpty();
            next.submit(second::release).get(10, TimeUnit.SECONDS); // throws LockLostException if it was lost
        } finally {
            next.shutdownNow();
        }
    }

    /** The watchdog's batched renewal of {@code type}'s holdings. */
    private static RedisScript<String> renewalScript(LockType type) {
        return switch (type) {
            case EXCLUSIVE, FAIR, WRITE -> LockScripts.RENEW_MANY;
            case READ -> LockScripts.RW_READ_RENEW_MANY;
            case SEMAPHORE -> SemaphoreScripts.RENEW_MANY;
        };
    }

    /** Waits until the thread is parked: waiting for the lock. */
    private static void awaitWaiting(Thread[] thread) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (thread[0] == null || thread[0].getState() != Thread.State.WAITING
                && thread[0].getState() != Thread.State.TIMED_WAITING) {
            assertThat(System.nanoTime()).as("the next thread waits for the lock").isLessThan(end);
            Thread.sleep(5);
        }
        Thread.sleep(50); // parked for the lock, not on its way to Redis
    }

    /**
     * A thread that takes a lock handed over to it in Redis, asking for a fixed lease shorter than the watchdog's, holds
     * it under an owner id of its own: a renewal of the handed-over owner id (the watchdog renews the handed-over holding
     * until the thread takes it, and a thread can be late for it) finds it gone and does not stretch the fixed lease.
     */
    @Test
    void aThreadTakingAHandedOverLockWithAFixedLeaseHoldsItUnderItsOwnOwnerIdWhichNoEarlierRenewalCanStretch()
            throws Exception {
        String key = "in-flight:adopted";
        String lockKey = "redis-lock:{" + key + "}";
        ExecutorService next = Executors.newSingleThreadExecutor();
        JedisConnectionFactory factory = HoldBackProxy.jedisFactory(server.host(), server.port());
        try (RedisLockTemplate locks = new RedisLockTemplate(new StringRedisTemplate(factory),
                RedisLockConfig.defaults().withWatchdogLease(LEASE)); RedisMonitor monitor = new RedisMonitor(server)) {
            LockHandle first = locks.acquire(key, LockOptions.tryOnce());
            Future<LockHandle> taken = next.submit(() -> locks.acquire(key,
                    LockOptions.waitFor(Duration.ofSeconds(20)).withLease(Duration.ofMillis(1000))));
            LocalQueue.awaitQueued(locks, key, 1);
            first.release(); // hands the lock over in Redis, with the watchdog's lease, to an owner id for the next thread
            LockHandle second = taken.get(10, TimeUnit.SECONDS);

            String handedOverOwner = monitor.handedOverOwner(lockKey);
            assertThat(server.command("GET", lockKey)).as("the owner id the thread holds it under")
                    .isNotEqualTo(handedOverOwner);

            // the watchdog's renewal of the handed-over holding, reaching Redis after the thread set its lease
            assertThat(server.command("EVAL", LockScripts.RENEW_MANY.getScriptAsString(), "1", lockKey, handedOverOwner,
                    Long.toString(LEASE.toMillis()))).as("the late renewal's answer").isEqualTo("0");
            assertThat(pttl(key)).as("the fixed lease left").isBetween(1L, 1000L);
            assertThat(next.submit(second::isHeld).get(5, TimeUnit.SECONDS)).isTrue();
            next.submit(second::release).get(10, TimeUnit.SECONDS);
            assertThat(server.command("EXISTS", lockKey)).as("released by its holder").isEqualTo("0");
        } finally {
            next.shutdownNow();
            factory.destroy();
        }
    }

    /** A lock client whose connections pass through the proxy, with the test's watchdog lease, recording losses. */
    private static final class Client implements AutoCloseable {

        final JedisConnectionFactory factory;
        final RedisLockTemplate locks;
        final List<String> losses = new CopyOnWriteArrayList<>();

        Client(StallingProxy proxy) {
            factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", proxy.port()),
                    JedisClientConfiguration.builder().connectTimeout(Duration.ofSeconds(1)).readTimeout(READ_TIMEOUT)
                            .usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            locks = new RedisLockTemplate(new StringRedisTemplate(factory), RedisLockConfig.defaults().withWatchdogLease(LEASE));
            locks.addLockLostListener((lock, reason) -> losses.add(lock.key() + ": " + reason));
        }

        @Override
        public void close() {
            locks.close();
            factory.destroy();
        }
    }

    private long pttl(String key) {
        return Long.parseLong(server.command("PTTL", "redis-lock:{" + key + "}").trim());
    }
}
