package io.github.redislock.core;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A JVM whose threads queue for fair locks, started by {@link FairLockAcrossJvmsTest}: {@code <host> <port>}.
 * It prints {@code ready <client id>} once connected and warmed up, then reads commands from its standard input:
 * {@code queue <n> <key>} starts {@code n} threads that each wait for the fair lock of {@code key} once and,
 * holding it, append
 * {@code <owner id> <fencing token>} to the Redis list {@code {<key>}:order} (the owner id read back from the lock
 * itself) and add one to the counter {@code {<key>}:counter} by a read, a pause and a write (two holders at once
 * would lose an update); {@code section <key>} starts one thread that takes the lock once and records its section
 * ({@link HeldSections}). With {@code <subscription host> <subscription port>} after the first two arguments, the
 * client's release subscription connects there (a proxy the test holds back), its commands to Redis directly. The test kills it with SIGKILL, as a crashed application would be, while threads wait.
 */
public final class FairLockJvm {

    private FairLockJvm() {
    }

    public static void main(String[] args) throws Exception {
        JedisClientConfiguration client = JedisClientConfiguration.builder().usePooling().build();
        JedisConnectionFactory factory = new JedisConnectionFactory(
                new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])), client);
        factory.getPoolConfig().setMaxTotal(64);
        factory.afterPropertiesSet();
        factory.start();
        StringRedisTemplate redis = new StringRedisTemplate(factory);
        RedisLockTemplate template = new RedisLockTemplate(args.length < 4 ? redis
                : new StringRedisTemplate(SubscriptionRouting.route(factory, subscription(args[2], Integer.parseInt(args[3])))));
        redis.hasKey("ready"); // connected
        warmUp(template);
        Thread stallWatch = new Thread(FairLockJvm::reportStalls, "stall-watch");
        stallWatch.setDaemon(true);
        stallWatch.start();
        System.out.println("ready " + template.clientId());
        System.out.flush();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command = commands.readLine(); command != null; command = commands.readLine()) {
            String[] words = command.split(" ");
            if (words[0].equals("queue")) {
                String key = words[2];
                for (int i = Integer.parseInt(words[1]); i > 0; i--) {
                    new Thread(() -> holdOnce(template, redis, key)).start();
                }
            } else if (words[0].equals("section")) {
                new Thread(() -> recordSection(template, redis, words[1])).start();
            }
        }
        System.exit(0); // the test closed our input
    }

    /**
     * Queues this JVM's threads on a fair lock of its own a few times, so that class loading and compilation do not
     * pause the JVM while the test measures (a waiter silent for 500 ms is taken for dead and queues again).
     */
    private static void warmUp(RedisLockTemplate template) throws InterruptedException {
        String key = "warm-up:" + template.clientId();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 10; t++) {
            threads.add(new Thread(() -> {
                for (int i = 0; i < 20; i++) {
                    template.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(60))).release();
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
    }

    /** Prints each pause of this JVM over 200 ms (a waiter not refreshing its queue entry for 500 ms loses its place). */
    private static void reportStalls() {
        long last = System.nanoTime();
        while (true) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long gapMillis = (now - last) / 1_000_000;
            if (gapMillis > 200) {
                System.out.println("stalled " + gapMillis + " ms");
            }
            last = now;
        }
    }

    /** A connection factory for the release subscription alone (through a proxy the test holds back). */
    private static JedisConnectionFactory subscription(String host, int port) {
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(host, port),
                JedisClientConfiguration.builder().readTimeout(Duration.ofSeconds(10)).usePooling().build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** Takes the fair lock of {@code key} once, holds it 50 ms, recorded as {@code W} ({@link HeldSections}). */
    private static void recordSection(RedisLockTemplate template, StringRedisTemplate redis, String key) {
        try (LockHandle handle = template.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
            HeldSections.hold(redis, key, "W", handle, () -> {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        } catch (LockLostException e) {
            System.out.println("lost: " + e.getMessage());
        }
        System.out.println("section done");
        System.out.flush();
    }

    private static void holdOnce(RedisLockTemplate template, StringRedisTemplate redis, String key) {
        try (LockHandle handle = template.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(60)))) {
            String owner = redis.opsForValue().get("redis-lock:{" + key + "}");
            redis.opsForList().rightPush("{" + key + "}:order", owner + " " + handle.fencingToken());
            String counter = "{" + key + "}:counter";
            String value = redis.opsForValue().get(counter);
            Thread.sleep(1);
            redis.opsForValue().set(counter, Long.toString((value == null ? 0 : Long.parseLong(value)) + 1));
        } catch (Exception e) {
            e.printStackTrace();
        }
    }
}
