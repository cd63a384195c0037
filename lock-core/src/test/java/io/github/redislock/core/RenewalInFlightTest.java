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
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A renewer stalls: the watchdog's renewal of a held lock is stuck on its connection (behind a proxy, as a lost packet
 * leaves it until the driver's timeout) while the holder releases the lock and the next holder takes it, and reaches
 * Redis only after that. It must change nothing it was not sent for: not the next holder's lock, which stays held and
 * renewed with no loss reported, and not a minimum hold ({@code holdAtLeast}) the release left, which must still end
 * when it said.
 */
@WithRedis(freshForEachTest = true)
class RenewalInFlightTest {

    /** Renewed at the first look a quarter of it after the last renewal: about a second after the acquisition. */
    private static final Duration LEASE = Duration.ofSeconds(4);
    /** Far longer than a renewal is held back: the stuck call waits for the proxy, not for its driver's timeout. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(20);

    RedisServerProcess server;

    @Test
    void aMinimumHoldTheReleaseLeftStillEndsWhenItSaidAfterARenewalSentBeforeTheReleaseReachesRedis() throws Exception {
        String key = "in-flight:minimum-hold";
        try (StallingProxy proxy = new StallingProxy(server.port()); Client client = new Client(proxy)) {
            proxy.stallNextRequestContaining(LockScripts.RENEW_MANY.getSha1());
            LockHandle handle = client.locks.acquire(key, LockOptions.tryOnce().withHoldAtLeast(Duration.ofSeconds(3)));
            assertThat(proxy.awaitStalled(10_000)).as("the watchdog's renewal is stuck on its way").isTrue();

            handle.release(); // within the minimum hold: the lock stays in Redis until it ends, with no holder
            long leftMillis = pttl(key);
            assertThat(leftMillis).as("the minimum hold left in Redis").isBetween(1L, 3_000L);

            long scriptCalls = scriptCalls();
            proxy.release(); // the renewal sent for the released holding reaches Redis now
            awaitScriptCallsAbove(scriptCalls);

            assertThat(pttl(key)).as("the lock's time left once the renewal sent before the release ran (its lease: %d ms)",
                    LEASE.toMillis()).isBetween(1L, leftMillis);
            assertThat(client.losses).isEmpty();
        }
    }

    @Test
    void theNextHolderOfTheLockStaysHeldAndRenewedAfterTheEarlierHoldersRenewalReachesRedisLate() throws Exception {
        String key = "in-flight:next-holder";
        ExecutorService next = Executors.newSingleThreadExecutor();
        try (StallingProxy proxy = new StallingProxy(server.port()); Client client = new Client(proxy)) {
            proxy.stallNextRequestContaining(LockScripts.RENEW_MANY.getSha1());
            LockHandle first = client.locks.acquire(key, LockOptions.tryOnce());
            assertThat(proxy.awaitStalled(10_000)).as("the watchdog's renewal is stuck on its way").isTrue();

            // a thread of the same client queues for the lock: the release hands it over in Redis, to a new owner id
            Future<LockHandle> taken = next.submit(() -> client.locks.acquire(key, LockOptions.waitFor(Duration.ofSeconds(20))));
            LocalQueue.awaitQueued(client.locks, key, 1);
            first.release();
            LockHandle second = taken.get(10, TimeUnit.SECONDS);
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());

            long scriptCalls = scriptCalls();
            proxy.release(); // the first holding's renewal reaches Redis: not its owner's any more, it answers "not held"
            awaitScriptCallsAbove(scriptCalls);

            // hold it past a whole lease: renewed all along, never reported lost
            long until = System.nanoTime() + LEASE.toNanos() * 3 / 2;
            while (System.nanoTime() < until) {
                assertThat(next.submit(second::isHeld).get(5, TimeUnit.SECONDS)).as("the next holder holds it").isTrue();
                assertThat(pttl(key)).as("the lock's time left in Redis").isPositive();
                Thread.sleep(100);
            }
            assertThat(client.losses).as("losses reported").isEmpty();
            next.submit(second::release).get(10, TimeUnit.SECONDS);
            assertThat(server.command("EXISTS", "redis-lock:{" + key + "}")).isEqualTo("0");
        } finally {
            next.shutdownNow();
        }
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
                    LockOptions.waitFor(Duration.ofSeconds(20)).withLease(Duration.ofMillis(1500))));
            LocalQueue.awaitQueued(locks, key, 1);
            first.release(); // hands the lock over in Redis, with the watchdog's lease, to an owner id for the next thread
            LockHandle second = taken.get(10, TimeUnit.SECONDS);

            String handedOverOwner = monitor.handedOverOwner(lockKey);
            assertThat(server.command("GET", lockKey)).as("the owner id the thread holds it under")
                    .isNotEqualTo(handedOverOwner);

            // the watchdog's renewal of the handed-over holding, reaching Redis after the thread set its lease
            assertThat(server.command("EVAL", LockScripts.RENEW_MANY.getScriptAsString(), "1", lockKey, handedOverOwner,
                    Long.toString(LEASE.toMillis()))).as("the late renewal's answer").isEqualTo("0");
            assertThat(pttl(key)).as("the fixed lease left").isBetween(1L, 1500L);
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

    /** Script calls Redis ran so far ({@code INFO commandstats}). */
    private long scriptCalls() {
        long calls = 0;
        for (String line : server.command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                calls += Long.parseLong(line.replaceAll(".*calls=(\\d+).*", "$1"));
            }
        }
        return calls;
    }

    private void awaitScriptCallsAbove(long calls) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (scriptCalls() <= calls) {
            assertThat(System.nanoTime()).as("the held-back renewal reaches Redis").isLessThan(end);
            Thread.sleep(5);
        }
    }
}
