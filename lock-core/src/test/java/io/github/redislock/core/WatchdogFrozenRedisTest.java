package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.sun.management.OperatingSystemMXBean;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The watchdog with many held locks while their Redis is frozen (SIGSTOP: connections stay open, nothing is answered):
 * its renewal calls pile up (each waits for its read timeout, and one unanswered for a quarter lease is sent again),
 * and run on no more threads than the connection factory has pooled connections.
 */
@WithRedis(freshForEachTest = true)
class WatchdogFrozenRedisTest {

    /** A hundred batches of {@link Watchdog#MAX_BATCH} at a time, more with the resends: many more than the pool has. */
    private static final int LOCKS = 10_000;
    private static final Duration LEASE = Duration.ofSeconds(6);

    RedisServerProcess server;

    /**
     * The renewals to one Redis run on no more threads than its pooled Jedis client has connections (8 here). With
     * more (up to 256 before), the threads beyond the pool's size waited for a connection, and commons-pool's waiting
     * borrowers spin on the CPU while a connection is being made; to a frozen Redis that is all the time (each call
     * times out, its connection is dropped and made again).
     */
    @Test
    void renewalsPilingUpForAFrozenRedisNeverWaitForAPooledConnection() throws Exception {
        // Jedis's default pool (8 connections), as Spring Boot sets it up
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(server.host(),
                server.port()), JedisClientConfiguration.builder().connectTimeout(Duration.ofMillis(500))
                        .readTimeout(Duration.ofSeconds(1)).usePooling().build());
        factory.afterPropertiesSet();
        factory.start();
        RedisLockTemplate template = new RedisLockTemplate(new StringRedisTemplate(factory),
                RedisLockConfig.defaults().withWatchdogLease(LEASE));
        ListAppender<ILoggingEvent> log = WatchdogLockFamilyTest.watchdogLog();
        try {
            holdLocks(template);
            OperatingSystemMXBean process = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);
            long cpuBefore = process.getProcessCpuTime();
            server.pause();
            long pausedAt = System.nanoTime();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            int mostWaiting = 0;
            int mostRenewing = 0;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4); // within the lease: the locks are still renewed
            while (System.nanoTime() < until) {
                int waiting = 0;
                int renewing = 0;
                for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
                    if (info.getThreadName().startsWith("redis-lock-renewal-")
                            && info.getThreadState() != Thread.State.TIMED_WAITING) { // an idle pool thread waits timed
                        renewing++;
                        if (RedlockFrozenNodeTest.waitsForPooledConnection(info)) {
                            waiting++;
                        }
                    }
                }
                mostWaiting = Math.max(mostWaiting, waiting);
                mostRenewing = Math.max(mostRenewing, renewing);
                Thread.sleep(20);
            }
            System.out.println(LOCKS + " held locks, Redis frozen 4 s: at most " + mostRenewing + " renewal threads busy, "
                    + mostWaiting + " waiting for a pooled connection; this JVM's CPU "
                    + TimeUnit.NANOSECONDS.toMillis(process.getProcessCpuTime() - cpuBefore) + " ms");
            // a thread caught on its way through the pool's create() is no wait; two at once would be
            assertThat(mostWaiting).as("renewal threads waiting for a pooled connection at once").isLessThanOrEqualTo(1);

            // every unanswered batch is sent again, but the log says so once a second at most, counting the rest
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (resendWarnings(log).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            List<String> warnings = resendWarnings(log);
            long frozenSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - pausedAt);
            System.out.println("Redis frozen " + frozenSeconds + " s: the watchdog's warnings of resent renewals: " + warnings);
            assertThat(warnings).as("warnings of resent renewals while frozen for %d s", frozenSeconds).isNotEmpty()
                    .hasSizeLessThanOrEqualTo((int) frozenSeconds + 1);
        } finally {
            ((Logger) LoggerFactory.getLogger(Watchdog.class)).detachAppender(log);
            server.resume();
            template.close();
            factory.destroy();
        }
    }

    private static List<String> resendWarnings(ListAppender<ILoggingEvent> log) {
        synchronized (log) { // the appender appends under its own lock
            return log.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains("did not answer"))
                    .toList();
        }
    }

    private static void holdLocks(RedisLockTemplate template) throws Exception {
        ExecutorService acquirers = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                done.add(acquirers.submit(() -> {
                    for (int i = thread; i < LOCKS; i += 8) {
                        assertThat(template.tryAcquire("frozen-renewals:" + i, LockOptions.tryOnce())).isPresent();
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get(60, TimeUnit.SECONDS);
            }
        } finally {
            acquirers.shutdown();
        }
    }
}
