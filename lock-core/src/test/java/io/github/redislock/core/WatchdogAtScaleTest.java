package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Thousands of locks held at once with a short lease: the watchdog keeps every one of them, renewing them in
 * batches, so Redis runs far fewer script calls than there are locks; a lock deleted among them is reported lost,
 * and once they are released nothing is renewed any more. Script calls are counted as Redis counted them
 * ({@code INFO commandstats}).
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class WatchdogAtScaleTest {

    /**
     * Short, so that a few leases pass in seconds; long enough for 20,000 acquisitions not to outrun renewals, and for
     * a renewal to be answered on a loaded machine.
     */
    private static final Duration LEASE = Duration.ofSeconds(4);
    /** The Jedis clients' read timeout: the tests' usual second is too short for a loaded machine's stalls. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(3);
    private static final int LEASES_HELD = 3;

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;
    static StringRedisTemplate patient;

    /** The test's template, closed after it: its watchdog must not renew anything during the next test's count. */
    RedisLockTemplate template;

    @AfterEach
    void stopWatchdog() {
        if (template != null) {
            template.close();
        }
    }

    @Test
    void twentyThousandLocksOnJedisStayHeldAcrossSeveralLeasesWithFewRenewalCallsAndADeletedOneIsReportedLost()
            throws Exception {
        holdManyLocks(clients.redisTemplate(READ_TIMEOUT), "jedis", 20_000);
    }

    @Test
    void fiveThousandLocksOnLettuceStayHeldAcrossSeveralLeasesWithFewRenewalCallsAndADeletedOneIsReportedLost()
            throws Exception {
        holdManyLocks(clients.lettuceRedisTemplate(), "lettuce", 5_000);
    }

    @Test
    void readSharesAndSemaphorePermitsAreRenewedInBatchesTooAndAGoneOneIsReportedLost() throws Exception {
        int count = 2_000;
        template = clients.lockTemplate(new RedisLockTemplate(clients.redisTemplate(READ_TIMEOUT),
                RedisLockConfig.defaults().withWatchdogLease(LEASE)));
        Set<String> lost = ConcurrentHashMap.newKeySet();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key()));
        List<Holding> handles = new ArrayList<>(2 * count);
        for (int i = 0; i < count; i++) {
            String readKey = "at-scale-read:" + i;
            MultiLockHandle read = template.acquireAll(List.of(readKey), LockOptions.tryOnce(), LockType.READ);
            handles.add(new Holding(readKey, read::isHeld, read::release));
            PermitHandle permits = template.semaphore("at-scale-permits:" + i, 2).acquire(LockOptions.tryOnce());
            handles.add(new Holding(permits.key(), permits::isHeld, permits::release));
        }
        redis.delete("redis-lock:{at-scale-permits:7}:semaphore:holders"); // Redis lost these permits

        long callsBefore = scriptCalls();
        Thread.sleep(LEASE.multipliedBy(LEASES_HELD).toMillis());
        long renewalCalls = scriptCalls() - callsBefore;

        assertThat(lost).as("holdings reported lost").containsExactly("at-scale-permits:7");
        assertThat(handles.stream().filter(handle -> !handle.isHeld().getAsBoolean()).map(Holding::key).toList())
                .as("holdings not held after " + LEASES_HELD + " leases").containsExactly("at-scale-permits:7");
        long unbatched = 2L * count * LEASES_HELD * 3;
        System.out.printf("%,d read shares and %,d semaphore holdings held for %d leases of %d ms: %,d renewal script "
                + "calls (%,d one holding a call)%n", count, count, LEASES_HELD, LEASE.toMillis(), renewalCalls, unbatched);
        assertThat(renewalCalls).as("renewal script calls").isPositive().isLessThan(unbatched / 50);
        List<String> lostAtRelease = new ArrayList<>();
        for (Holding handle : handles) {
            try {
                handle.release().run();
            } catch (LockLostException e) {
                lostAtRelease.add(handle.key());
            }
        }
        assertThat(lostAtRelease).as("holdings whose release said they were lost").containsExactly("at-scale-permits:7");
        assertThat(template.diagnostics().scheduledRenewalCount()).as("holdings renewed after the release").isZero();
    }

    /** A read share or a semaphore holding, as the test sees it. */
    private record Holding(String key, BooleanSupplier isHeld, Runnable release) {
    }

    private void holdManyLocks(StringRedisTemplate driver, String name, int count) throws Exception {
        template = clients.lockTemplate(new RedisLockTemplate(driver,
                RedisLockConfig.defaults().withWatchdogLease(LEASE)));
        Set<String> lost = ConcurrentHashMap.newKeySet();
        template.addLockLostListener((lock, reason) -> lost.add(lock.key()));
        String prefix = "at-scale-" + name;
        List<LockHandle> handles = new ArrayList<>(count);
        long acquiring = System.nanoTime();
        for (int i = 0; i < count; i++) {
            handles.add(template.acquire(prefix + ":" + i, LockOptions.tryOnce()));
        }
        long acquiredMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquiring);
        int doomed = count / 3;
        String doomedKey = prefix + ":" + doomed;
        redis.delete("redis-lock:{" + doomedKey + "}"); // Redis lost this one (a flush, a failover without it)

        long callsBefore = scriptCalls();
        Thread.sleep(LEASE.multipliedBy(LEASES_HELD).toMillis());
        long renewalCalls = scriptCalls() - callsBefore;

        // every lock but the deleted one outlived several of its leases: each was renewed every lease
        assertThat(lost).as("locks reported lost").containsExactly(doomedKey);
        assertThat(handles.get(doomed).isHeld()).isFalse();
        List<String> notHeld = handles.stream().filter(handle -> !handle.isHeld()).map(LockHandle::key).toList();
        assertThat(notHeld).as("locks not held after " + LEASES_HELD + " leases").containsExactly(doomedKey);
        assertThat(lockKeysInRedis(prefix)).as("locks Redis still has").isEqualTo(count - 1);
        // unbatched, each lock takes a renewal call every third of a lease: 3 per lease
        long unbatched = (long) count * LEASES_HELD * 3;
        System.out.printf("%s: %,d locks acquired in %,d ms, then held for %d leases of %d ms: %,d renewal script calls "
                + "(%,d one lock a call)%n", name, count, acquiredMillis, LEASES_HELD, LEASE.toMillis(), renewalCalls,
                unbatched);
        assertThat(renewalCalls).as("renewal script calls while %,d locks were held", count)
                .isPositive().isLessThan(unbatched / 50);

        List<String> lostAtRelease = new ArrayList<>();
        for (LockHandle handle : handles) {
            if (handle != handles.get(doomed)) {
                try {
                    handle.release();
                } catch (LockLostException e) {
                    lostAtRelease.add(handle.key());
                }
            }
        }
        assertThat(lostAtRelease).as("locks whose release said they were lost").isEmpty();
        assertThatThrownBy(handles.get(doomed)::release).isInstanceOf(LockLostException.class);
        assertThat(template.diagnostics().scheduledRenewalCount()).as("holdings renewed after the release").isZero();
        assertThat(template.diagnostics().localLockCount()).as("local locks after the release").isZero();
        Thread.sleep(LEASE.toMillis() / 2); // a renewal on its way as the releases ran has landed by now
        long afterRelease = scriptCalls();
        Thread.sleep(LEASE.toMillis()); // three renewals would have been due for each lock still watched
        assertThat(scriptCalls() - afterRelease).as("script calls a lease after the release").isZero();
        assertThat(lockKeysInRedis(prefix)).as("locks Redis still has after the release").isZero();
    }

    /** The script calls Redis has run so far (EVALSHA, and EVAL after a NOSCRIPT). */
    private static long scriptCalls() {
        return server.command("INFO", "commandstats").lines()
                .filter(line -> line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .sum();
    }

    /**
     * How many of the locks named {@code prefix:<n>} Redis has: counted on a connection that waits 30 s for each reply,
     * since a busy machine can hold up one SCAN page past the two seconds the lock's own clients allow (a check of the
     * test's, not a renewal; it once failed a CI run on a loaded machine with a read timeout).
     */
    private static int lockKeysInRedis(String prefix) {
        if (patient == null) {
            patient = clients.redisTemplate(Duration.ofSeconds(30));
        }
        int found = 0;
        try (Cursor<String> keys = patient.scan(ScanOptions.scanOptions().match("redis-lock:{" + prefix + ":*}").count(1000)
                .build())) {
            while (keys.hasNext()) {
                keys.next();
                found++;
            }
        }
        return found;
    }
}
