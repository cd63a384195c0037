package io.github.redislock.integration;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import io.github.redislock.core.RedisLockConfig;
import io.github.redislock.core.RedisLockTemplate;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * One application instance of {@link LeaderElectionAcrossJvmsTest}: {@code <host> <port> <watchdog lease ms> <name>}.
 * A plain Spring application context with a lock template (that watchdog lease), a
 * {@link RedisLockOperationsRegistry} over it and Spring Integration's {@link LockRegistryLeaderInitiator} for the role
 * {@value #ROLE}. It prints {@code ready} once started, {@code granted <epoch micros> <fencing token>} and
 * {@code revoked <epoch micros>} as its leadership comes and goes (this machine's clock, shared by the JVMs), and exits
 * when its standard input closes (the test ended).
 */
public final class LeaderJvm {

    static final String ROLE = "leader-election";
    static final long HEART_BEAT_MILLIS = 200;

    private LeaderJvm() {
    }

    public static void main(String[] args) throws IOException {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[2]));
        GenericApplicationContext context = new GenericApplicationContext();
        context.registerBean(JedisConnectionFactory.class,
                () -> new JedisConnectionFactory(new RedisStandaloneConfiguration(host, port)));
        context.registerBean(RedisLockTemplate.class, () -> new RedisLockTemplate(
                new StringRedisTemplate(context.getBean(JedisConnectionFactory.class)),
                RedisLockConfig.defaults().withWatchdogLease(lease)));
        context.registerBean(RedisLockOperationsRegistry.class,
                () -> new RedisLockOperationsRegistry(context.getBean(RedisLockTemplate.class)));
        context.registerBean(LockRegistryLeaderInitiator.class, () -> {
            RedisLockOperationsRegistry registry = context.getBean(RedisLockOperationsRegistry.class);
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry,
                    new PrintingCandidate(args[3], registry));
            initiator.setHeartBeatMillis(HEART_BEAT_MILLIS);
            initiator.setBusyWaitMillis(50);
            return initiator;
        });
        context.refresh(); // starts the connection factory and the initiator (both SmartLifecycle)
        print("ready");
        while (System.in.read() != -1) {
            // the test ends this JVM by closing its input, or kills it
        }
        context.close();
        System.exit(0);
    }

    static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static long epochMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    /** Tells the test when it leads: the time first, taken on the thread that holds the lock. */
    private static final class PrintingCandidate extends DefaultCandidate {

        private final RedisLockOperationsRegistry registry;

        PrintingCandidate(String id, RedisLockOperationsRegistry registry) {
            super(id, ROLE);
            this.registry = registry;
        }

        @Override
        public void onGranted(Context context) {
            long at = epochMicros();
            print("granted " + at + " " + registry.fencingToken(ROLE).orElse(-1));
            super.onGranted(context);
        }

        @Override
        public void onRevoked(Context context) {
            print("revoked " + epochMicros());
            super.onRevoked(context);
        }
    }
}
