package io.github.redislock.chaos;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockLostListener;
import io.github.redislock.core.LockType;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.MultiLockHandle;
import io.github.redislock.core.PermitHandle;
import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.RedisSemaphore;
import io.github.redislock.core.RedlockTemplate;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A worker JVM: threads that take the lock, read the resource, sleep 5-30 ms, and write it back
 * plus one, until the end time. The lock is {@code engine} (the exclusive lock), {@code fair} (the fair lock,
 * {@code fairLock(key).acquire}), {@code rw} (the read/write lock: 70 % of the sections take the read side and only read,
 * the others take the write side and read, then write) or {@code broken}: a deliberately broken lock (GET, then
 * SET), for the checker's self-test.
 * <p>
 * Arguments: {@code <id> <redis port> <resource port> <threads> <lease ms> <check isHeld: true|false>
 * <end epoch ms> <engine|fair|rw|semaphore|broken|redlock:port,port,...> [<section sleep ms: min-max, default 5-30>]};
 * {@code redlock:} locks with a {@link RedlockTemplate} over independent masters on those ports (the Redis port is then
 * unused); {@code semaphore} takes one permit of {@link #SEMAPHORE_PERMITS} and reads as a shared reader.
 * With {@code -D}{@value #SUBSCRIPTION_PORT}{@code =port} the engine's pub/sub connection goes to that port (a second
 * proxy to the same Redis) and its commands to the Redis port.
 */
public final class Worker {

    static final String KEY = "chaos";
    /** The share of read/write sections that only read. */
    static final int READ_PERCENT = 70;

    /** The semaphore's limit ({@code semaphore}): at most this many sections at once. */
    static final int SEMAPHORE_PERMITS = 2;
    /**
     * A system property naming a port through which this worker's pub/sub connection (the engine's release
     * notices) goes, while its commands go to the Redis port argument: the controller delays one without the other.
     */
    static final String SUBSCRIPTION_PORT = "chaos.subscription-port";

    /** How long a section waits for the lock before it gives up and tries again. */
    static final Duration WAIT = Duration.ofSeconds(5);

    private static volatile boolean stopped;

    private final String id;
    private final int resourcePort;
    private final boolean checkHeld;
    /** The shortest and longest sleep inside a section, in ms (5 and 30 unless the arguments say otherwise). */
    private final int sleepMin;
    private final int sleepMax;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private Worker(String id, int resourcePort, boolean checkHeld, int sleepMin, int sleepMax) {
        this.id = id;
        this.resourcePort = resourcePort;
        this.checkHeld = checkHeld;
        this.sleepMin = sleepMin;
        this.sleepMax = sleepMax;
    }

    public static void main(String[] args) throws Exception {
        String id = args[0];
        int redisPort = Integer.parseInt(args[1]);
        int resourcePort = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        long leaseMillis = Long.parseLong(args[4]);
        boolean checkHeld = Boolean.parseBoolean(args[5]);
        long endAt = Long.parseLong(args[6]);
        String lockType = args[7];
        String[] sleep = (args.length > 8 ? args[8] : "5-30").split("-");
        boolean broken = "broken".equals(lockType);
        List<Integer> redlockPorts = lockType.startsWith("redlock:")
                ? java.util.Arrays.stream(lockType.substring("redlock:".length()).split(",")).map(Integer::valueOf).toList()
                : List.of();

        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redisPort),
                JedisClientConfiguration.builder().connectTimeout(Duration.ofMillis(500)).readTimeout(Duration.ofMillis(500))
                        .usePooling().build());
        factory.afterPropertiesSet();
        factory.start();
        Integer subscriptionPort = Integer.getInteger(SUBSCRIPTION_PORT);
        JedisConnectionFactory subscriptionFactory = subscriptionPort == null ? null : new JedisConnectionFactory(
                new RedisStandaloneConfiguration("127.0.0.1", subscriptionPort), JedisClientConfiguration.builder()
                        .connectTimeout(Duration.ofMillis(500)).readTimeout(Duration.ofMillis(500)).usePooling().build());
        if (subscriptionFactory != null) {
            subscriptionFactory.afterPropertiesSet();
            subscriptionFactory.start();
        }
        StringRedisTemplate redis = new StringRedisTemplate(subscriptionFactory == null ? factory
                : SubscriptionRouting.factory(factory, subscriptionFactory));
        RedisLockConfig config = RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(leaseMillis));
        RedisLockTemplate locks = new RedisLockTemplate(redis, config);
        List<JedisConnectionFactory> nodeFactories = new ArrayList<>();
        RedlockTemplate redlock = redlockPorts.isEmpty() ? null : redlock(redlockPorts, config, nodeFactories);
        Worker worker = new Worker(id, resourcePort, checkHeld, Integer.parseInt(sleep[0]), Integer.parseInt(sleep[1]));
        RedisSemaphore semaphore = locks.semaphore(KEY, SEMAPHORE_PERMITS);
        // a lease that ran out here means this process was stalled past it (a pause, or starved of CPU on a loaded
        // machine); "gone" means Redis no longer had it, which a stall of this process cannot explain
        LockLostListener lossRecorder = (lock, reason) -> worker.record("/event?type="
                + (reason.contains("ran out") && !reason.contains("majority") ? "lost-stalled" : "lost") + "&worker=" + id
                + "-watchdog&token=" + lock.fencingToken());
        locks.addLockLostListener(lossRecorder);
        if (redlock != null) {
            redlock.addLockLostListener(lossRecorder);
        }
        // the controller maps the owner ids it sees in Redis (client id:thread:acquisition) back to this process
        System.out.println("worker " + id + " ready, pid " + ProcessHandle.current().pid() + ", client " + locks.clientId());

        // the controller closes our stdin to stop us
        Thread stopper = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // wait for end of input
                }
            } catch (java.io.IOException ignored) {
                // treat as end of input
            }
            stopped = true;
        });
        stopper.setDaemon(true);
        stopper.start();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String name = id + "-" + t;
            Thread thread = new Thread(() -> {
                while (!stopped && System.currentTimeMillis() < endAt) {
                    try {
                        switch (lockType) {
                            case "broken" -> worker.brokenSection(name, redis);
                            case "fair" -> worker.section(name, () -> locks.fairLock(KEY).acquire(LockOptions.waitFor(WAIT)));
                            case "semaphore" -> worker.permitSection(name, semaphore);
                            case "rw" -> {
                                if (ThreadLocalRandom.current().nextInt(100) < READ_PERCENT) {
                                    worker.readSection(name, locks);
                                } else {
                                    worker.section(name, () -> asHandle(
                                            locks.acquireAll(List.of(KEY), LockOptions.waitFor(WAIT), LockType.WRITE)));
                                }
                            }
                            default -> worker.section(name, redlock != null
                                    ? () -> redlock.acquire(KEY, LockOptions.waitFor(WAIT))
                                    : () -> locks.acquire(KEY, LockOptions.waitFor(WAIT)));
                        }
                    } catch (RuntimeException e) {
                        System.out.println(name + " section failed: " + e + (e.getCause() == null ? "" : " caused by " + e.getCause()));
                        pause(20); // Redis or the resource unreachable: try again
                    }
                }
            }, name);
            running.add(thread);
            thread.start();
        }
        for (Thread thread : running) {
            thread.join();
        }
        Thread.sleep(200);
        if (redlock != null) {
            System.out.println("leftovers renewals=" + redlock.diagnostics().scheduledRenewalCount() + " locks=" + redlock.diagnostics().localLockCount());
            redlock.close();
            nodeFactories.forEach(JedisConnectionFactory::destroy);
        } else {
            System.out.println("leftovers renewals=" + locks.diagnostics().scheduledRenewalCount() + " locks="
                    + locks.diagnostics().localLockCount());
        }
        locks.close();
        factory.destroy();
        if (subscriptionFactory != null) {
            subscriptionFactory.destroy();
        }
        System.exit(0);
    }

    /** A Redlock over Jedis clients on {@code ports}, short timeouts as a Redlock deployment would set. */
    private static RedlockTemplate redlock(List<Integer> ports, RedisLockConfig config, List<JedisConnectionFactory> factories) {
        java.util.Map<String, StringRedisTemplate> nodes = new java.util.LinkedHashMap<>();
        for (int port : ports) {
            JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
                    JedisClientConfiguration.builder().connectTimeout(Duration.ofMillis(500)).readTimeout(Duration.ofMillis(500))
                            .usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            factories.add(factory);
            nodes.put("127.0.0.1:" + port, new StringRedisTemplate(factory));
        }
        return new RedlockTemplate(nodes, config, Duration.ofMillis(500));
    }

    private void section(String name, java.util.function.Supplier<LockHandle> acquire) {
        LockHandle lock;
        long start = System.nanoTime();
        try {
            lock = acquire.get();
        } catch (LockNotAcquiredException e) {
            System.out.println(name + " gave up after " + (System.nanoTime() - start) / 1_000_000 + " ms: " + e.getMessage());
            return;
        }
        long token = lock.fencingToken();
        try {
            long value = Long.parseLong(get("/read?worker=" + name + "&token=" + token));
            pause(sectionSleep());
            if (checkHeld && !lock.isHeld()) {
                post("/event?type=abandon&worker=" + name + "&token=" + token);
            } else {
                post("/write?worker=" + name + "&token=" + token + "&value=" + (value + 1));
            }
        } finally {
            try {
                lock.release();
            } catch (LockLostException lost) {
                record("/event?type=lost&worker=" + name + "&token=" + token);
            } catch (RuntimeException e) {
                // Redis unreachable: the lease ends it; printed for a failed scenario's report
                System.out.println(name + " release failed: " + e);
            }
        }
    }

    /**
     * A reader's section: takes the read side, reads the resource as a shared reader (other readers may read at the
     * same time, no writer may), sleeps 5-30 ms, and says it is done; it writes nothing.
     */
    private void readSection(String name, RedisLockTemplate locks) {
        MultiLockHandle lock;
        try {
            lock = locks.acquireAll(List.of(KEY), LockOptions.waitFor(WAIT), LockType.READ);
        } catch (LockNotAcquiredException e) {
            System.out.println(name + " gave up reading: " + e.getMessage());
            return;
        }
        long token = lock.fencingToken(KEY);
        try {
            get("/read?shared=true&worker=" + name + "&token=" + token);
            pause(sectionSleep());
            post("/event?type=shared-end&worker=" + name + "&token=" + token);
        } finally {
            try {
                lock.release();
            } catch (LockLostException lost) {
                record("/event?type=lost&worker=" + name + "&token=" + token);
            } catch (RuntimeException e) {
                System.out.println(name + " release failed: " + e);
            }
        }
    }

    /**
     * A semaphore holder's section: takes one permit of {@link #SEMAPHORE_PERMITS}, reads the resource as a shared
     * reader (up to that many at once), sleeps, and says it is done; it writes nothing. A holder that finds its permit
     * no longer held ({@code isHeld()} false) ends its section at once.
     */
    private void permitSection(String name, RedisSemaphore semaphore) {
        PermitHandle permit;
        long start = System.nanoTime();
        try {
            permit = semaphore.acquire(LockOptions.waitFor(WAIT));
        } catch (LockNotAcquiredException e) {
            System.out.println(name + " gave up after " + (System.nanoTime() - start) / 1_000_000 + " ms: " + e.getMessage());
            return;
        }
        long token = permit.fencingToken();
        try {
            get("/read?shared=true&worker=" + name + "&token=" + token);
            pause(sectionSleep());
            post("/event?type=" + (checkHeld && !permit.isHeld() ? "abandon" : "shared-end") + "&worker=" + name
                    + "&token=" + token);
        } finally {
            try {
                permit.release();
            } catch (LockLostException lost) {
                record("/event?type=lost&worker=" + name + "&token=" + token);
            } catch (RuntimeException e) {
                System.out.println(name + " release failed: " + e);
            }
        }
    }

    private int sectionSleep() {
        return ThreadLocalRandom.current().nextInt(sleepMin, sleepMax + 1);
    }

    /** The write side of the read/write lock, seen as a {@link LockHandle} so a writer runs the exclusive section. */
    private static LockHandle asHandle(MultiLockHandle write) {
        return new LockHandle() {
            @Override
            public String key() {
                return KEY;
            }

            @Override
            public long fencingToken() {
                return write.fencingToken(KEY);
            }

            @Override
            public boolean isHeld() {
                return write.isHeld();
            }

            @Override
            public void release() {
                write.release();
            }
        };
    }

    /** The self-test's broken lock: check, then set, in two commands; two workers can both pass the check. */
    private void brokenSection(String name, StringRedisTemplate redis) {
        while (redis.opsForValue().get("broken-lock") != null) {
            pause(1);
        }
        redis.opsForValue().set("broken-lock", name, Duration.ofSeconds(5));
        long token = redis.opsForValue().increment("broken-token");
        try {
            long value = Long.parseLong(get("/read?worker=" + name + "&token=" + token));
            pause(ThreadLocalRandom.current().nextInt(5, 31));
            post("/write?worker=" + name + "&token=" + token + "&value=" + (value + 1));
        } finally {
            redis.delete("broken-lock");
        }
    }

    /**
     * Posts an event whose recording the checker depends on (a loss signal), retrying a few times: a
     * resource call that fails on a loaded machine must not read as a signal the engine did not give.
     * Recording one twice changes nothing (lost tokens form a set).
     */
    private void record(String path) {
        for (int attempt = 1;; attempt++) {
            try {
                post(path);
                return;
            } catch (IllegalStateException e) {
                if (attempt == 3) {
                    throw e;
                }
                System.out.println("recording " + path + " failed, retrying: " + e.getCause());
            }
        }
    }

    private String get(String path) {
        return call(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + resourcePort + path)).GET());
    }

    private String post(String path) {
        return call(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + resourcePort + path))
                .POST(HttpRequest.BodyPublishers.noBody()));
    }

    /**
     * One call to the resource, given up after 6 s at the latest: the request's own 5 s timeout once did not fire (JDK 17's
     * HttpClient left a worker parked for minutes with its section open, and the whole fault run waited for it).
     */
    private String call(HttpRequest.Builder request) {
        CompletableFuture<HttpResponse<String>> response = http.sendAsync(request.timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        try {
            return response.get(6, TimeUnit.SECONDS).body();
        } catch (Exception e) {
            response.cancel(true);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("resource call failed", e);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
