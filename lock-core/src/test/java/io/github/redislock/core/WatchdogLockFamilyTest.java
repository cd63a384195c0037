package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The one watchdog renews every lock type's holdings, not only the exclusive lock's: read, write, fair and semaphore
 * holdings are renewed while held and not after their release, reported lost when their Redis key goes, and a
 * renewal a frozen Redis does not answer is sent again after a quarter of the lease. Renewals are counted as Redis
 * ran them, with MONITOR.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class WatchdogLockFamilyTest {

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;

    String key;
    RedisMonitor monitor;

    /** A holding of one lock type, as a test sees it. */
    record Held(long token, BooleanSupplier isHeld, Runnable release) {
    }

    enum Type {
        // every type's holdings are renewed in batches (here batches of one), each type with its batched script
        READ(LockScripts.RW_READ_RENEW_MANY, ":rw:readers", LockScripts.RW_RELEASE, ":rw:writer", "read", ":rw:readers") {
            @Override
            Held acquire(RedisLockTemplate template, String key) {
                MultiLockHandle handle = template.acquireAll(List.of(key), LockOptions.tryOnce(), LockType.READ);
                return new Held(handle.fencingToken(key), handle::isHeld, handle::release);
            }
        },
        WRITE(LockScripts.RENEW_MANY, ":rw:writer", LockScripts.RW_RELEASE, ":rw:writer", "write", ":rw:writer") {
            @Override
            Held acquire(RedisLockTemplate template, String key) {
                MultiLockHandle handle = template.acquireAll(List.of(key), LockOptions.tryOnce(), LockType.WRITE);
                return new Held(handle.fencingToken(key), handle::isHeld, handle::release);
            }
        },
        FAIR(LockScripts.RENEW_MANY, "", FairLockScripts.FAIR_RELEASE, "", null, "") {
            @Override
            Held acquire(RedisLockTemplate template, String key) {
                LockHandle handle = template.fairLock(key).acquire(LockOptions.tryOnce());
                return new Held(handle.fencingToken(), handle::isHeld, handle::release);
            }
        },
        SEMAPHORE(SemaphoreScripts.RENEW_MANY, ":semaphore:holders", SemaphoreScripts.RELEASE, ":semaphore:holders", null,
                ":semaphore:holders") {
            @Override
            Held acquire(RedisLockTemplate template, String key) {
                PermitHandle handle = template.semaphore(key, 2).acquire(LockOptions.tryOnce());
                return new Held(handle.fencingToken(), handle::isHeld, handle::release);
            }
        };

        final RedisScript<?> renewScript;
        /** The first Redis key the renew script gets, after {@code redis-lock:{key}}. */
        final String renewKeySuffix;
        final RedisScript<Long> releaseScript;
        /** The first Redis key the release script gets, after {@code redis-lock:{key}}. */
        final String releaseKeySuffix;
        /** The argument telling a read/write release which side it is for, or {@code null}. */
        final String releaseSide;
        /** The Redis key whose loss loses the holding, after {@code redis-lock:{key}}. */
        final String leaseKeySuffix;

        Type(RedisScript<?> renewScript, String renewKeySuffix, RedisScript<Long> releaseScript, String releaseKeySuffix,
                String releaseSide, String leaseKeySuffix) {
            this.renewScript = renewScript;
            this.renewKeySuffix = renewKeySuffix;
            this.releaseScript = releaseScript;
            this.releaseKeySuffix = releaseKeySuffix;
            this.releaseSide = releaseSide;
            this.leaseKeySuffix = leaseKeySuffix;
        }

        abstract Held acquire(RedisLockTemplate template, String key);

        Predicate<String> renewals(String key) {
            return RedisMonitor.evalsha(renewScript, "redis-lock:{" + key + "}" + renewKeySuffix);
        }

        Predicate<String> releases(String key) {
            String first = "redis-lock:{" + key + "}" + releaseKeySuffix;
            return releaseSide == null ? RedisMonitor.evalsha(releaseScript, first)
                    : RedisMonitor.evalsha(releaseScript, first, releaseSide);
        }

        String leaseKey(String key) {
            return "redis-lock:{" + key + "}" + leaseKeySuffix;
        }
    }

    @BeforeAll
    static void loadScripts() {
        // so that the first call of each script is an EVALSHA too (not an EVAL after NOSCRIPT), which MONITOR shows by SHA
        for (Type type : Type.values()) {
            server.command("SCRIPT", "LOAD", type.renewScript.getScriptAsString());
            server.command("SCRIPT", "LOAD", type.releaseScript.getScriptAsString());
        }
    }

    @BeforeEach
    void startMonitor(TestInfo test) throws Exception {
        key = test.getTestMethod().orElseThrow().getName() + ":" + test.getDisplayName().replaceAll("\\W", "");
        monitor = new RedisMonitor(server);
    }

    @AfterEach
    void stopMonitor() throws Exception {
        server.resume();
        monitor.close();
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void aHoldingIsRenewedEveryLeaseWhileHeldAndNotOnceItIsReleased(Type type) throws Exception {
        Duration lease = Duration.ofMillis(1500); // long enough for a renewal to be answered on a loaded machine
        RedisLockTemplate template = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(lease));
        Held held = type.acquire(template, key);
        Predicate<String> renewals = type.renewals(key);

        int leases = 3;
        Thread.sleep(lease.multipliedBy(leases).toMillis());
        assertThat(held.isHeld().getAsBoolean()).as("held after " + leases + " leases").isTrue();
        assertThat(redis.getExpire(type.leaseKey(key), TimeUnit.MILLISECONDS)).as("TTL in Redis").isPositive();
        // Redis ends a lease not renewed within it: every lease after the first took a renewal at least
        assertThat(monitor.count(renewals)).as("renewals Redis ran").isGreaterThanOrEqualTo(leases - 1);

        held.release().run(); // no LockLostException: Redis still had it as ours
        Thread.sleep(lease.toMillis()); // a lease, in which two renewals would have been due
        assertThat(monitor.count(type.releases(key))).as("releases").isEqualTo(1);
        // one renewal may have been on its way as the release ran; none may be sent after
        int afterRelease = monitor.countAfterLast(type.releases(key), renewals);
        System.out.printf("%s holding, lease %d ms: %d renewals while held for %d leases, %d after the release%n", type,
                lease.toMillis(), monitor.count(renewals) - afterRelease, leases, afterRelease);
        assertThat(afterRelease).as("renewals after the release").isLessThanOrEqualTo(1);
        assertThat(template.diagnostics().scheduledRenewalCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void aHoldingWhoseKeyIsDeletedIsReportedLostToTheListenersAndAtItsRelease(Type type) throws Exception {
        RedisLockTemplate template = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(1500)));
        CompletableFuture<String> told = new CompletableFuture<>();
        template.addLockLostListener((lock, reason) -> told.complete(lock.key() + " " + lock.fencingToken() + ": " + reason));
        Held held = type.acquire(template, key);

        redis.delete(type.leaseKey(key)); // Redis lost it (a restart without data, a flush)

        assertThat(told.get(10, TimeUnit.SECONDS)).startsWith(key + " " + held.token() + ": ").contains("gone from Redis");
        assertThat(held.isHeld().getAsBoolean()).isFalse();
        assertThatThrownBy(held.release()::run).isInstanceOf(LockLostException.class).hasMessageContaining(key);
    }

    /**
     * Redis is frozen (SIGSTOP) from just after a renewal until most of a lease later: the next renewal gets no
     * answer, and the watchdog sends it again a quarter of the lease after it, on another thread and connection
     * (the client's read timeout is longer than the lease). Once Redis runs again, it has both, and the holding was
     * kept.
     */
    @ParameterizedTest
    @EnumSource(Type.class)
    void aRenewalAFrozenRedisLeavesUnansweredIsSentAgainAfterAQuarterOfTheLease(Type type) throws Exception {
        Duration lease = Duration.ofSeconds(4);
        StringRedisTemplate patient = clients.redisTemplate(lease.multipliedBy(3));
        RedisLockTemplate template = clients.lockTemplate(new RedisLockTemplate(patient,
                RedisLockConfig.defaults().withWatchdogLease(lease)));
        ListAppender<ILoggingEvent> log = watchdogLog();
        try {
            Held held = type.acquire(template, key);
            Predicate<String> renewals = type.renewals(key);
            monitor.awaitCount(renewals, 1, lease.multipliedBy(3), "renewals of the " + type + " holding");
            long renewedAt = System.nanoTime();

            server.pause();
            long pausedAt = System.currentTimeMillis();
            // the next renewal is sent a third to a half of a lease after the last, and sent again a quarter of a
            // lease later, so by three quarters of a lease; the local lease ends at 99% of a lease
            awaitNanos(renewedAt + lease.toNanos() * 87 / 100);
            int ranBeforeResume = monitor.count(renewals);
            long frozenFor = System.currentTimeMillis() - pausedAt;
            server.resume();

            monitor.awaitCount(renewals, ranBeforeResume + 2, lease, "renewals of the " + type + " holding after the freeze");
            String quarter = (lease.toMillis() / 4) + "ms";
            List<ILoggingEvent> logged;
            synchronized (log) { // the appender appends under its own lock
                logged = new ArrayList<>(log.list);
            }
            List<ILoggingEvent> resends = logged.stream().filter(event -> event.getFormattedMessage().contains(key)
                    && event.getFormattedMessage().contains("sending it again")).toList();
            assertThat(resends).as("the watchdog's log of resends").isNotEmpty().allSatisfy(event -> assertThat(
                    event.getFormattedMessage()).contains("did not answer the renewal of").contains("within " + quarter));
            System.out.printf("%s holding, lease %d ms: Redis frozen for %d ms; the watchdog resent the renewal %d time(s), "
                    + "first %d ms into the freeze; Redis ran %d renewals once resumed%n", type, lease.toMillis(),
                    frozenFor, resends.size(), resends.get(0).getTimeStamp() - pausedAt,
                    monitor.count(renewals) - ranBeforeResume);
            assertThat(held.isHeld().getAsBoolean()).as("held after the freeze").isTrue();
            held.release().run(); // no LockLostException
        } finally {
            ((Logger) LoggerFactory.getLogger(Watchdog.class)).detachAppender(log);
        }
    }

    /** The watchdog's log from now on; detach it from the {@link Watchdog} logger afterwards. */
    static ListAppender<ILoggingEvent> watchdogLog() {
        Logger logger = (Logger) LoggerFactory.getLogger(Watchdog.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        return appender;
    }

    private static void awaitNanos(long deadline) throws InterruptedException {
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
