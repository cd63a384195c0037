package io.github.redislock.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Sentinel deployment of real processes on free loopback ports: one master, one replica and
 * three sentinels (quorum 2) watching the master as {@value #MASTER_NAME}, with a fast failover
 * (down after 1 s).
 */
public final class RedisSentinelProcesses implements AutoCloseable {

    public static final String MASTER_NAME = "mymaster";

    private final RedisServerProcess master;
    private final RedisServerProcess replica;
    private final List<Sentinel> sentinels = new ArrayList<>();

    private RedisSentinelProcesses(RedisServerProcess master, RedisServerProcess replica) {
        this.master = master;
        this.replica = replica;
    }

    public static RedisSentinelProcesses start() {
        RedisServerProcess master = RedisServerProcess.start();
        RedisServerProcess replica = RedisServerProcess.start(List.of("--replicaof", master.host(), String.valueOf(master.port())));
        RedisSentinelProcesses deployment = new RedisSentinelProcesses(master, replica);
        try {
            deployment.awaitReplicaInSync();
            for (int i = 0; i < 3; i++) {
                deployment.sentinels.add(Sentinel.start(master));
            }
            return deployment;
        } catch (RuntimeException e) {
            deployment.close();
            throw e;
        }
    }

    public RedisServerProcess master() {
        return master;
    }

    public RedisServerProcess replica() {
        return replica;
    }

    /** {@code host:port} of every sentinel, for {@code spring.data.redis.sentinel.nodes}. */
    public List<String> sentinelNodes() {
        return sentinels.stream().map(s -> "127.0.0.1:" + s.port).toList();
    }

    /** The master's port as the sentinels currently see it. */
    public int currentMasterPort() {
        String reply = sentinels.get(0).command("SENTINEL", "get-master-addr-by-name", MASTER_NAME);
        return Integer.parseInt(reply.lines().skip(1).findFirst().orElseThrow());
    }

    /**
     * Waits until the first sentinel names the replica (the only one the sentinels can promote) as the master and the
     * replica answers {@code ROLE} as a master, after the master was killed or paused; fails with
     * {@link IllegalStateException} after {@code timeout}. A client follows whichever sentinel announces the new master
     * first, so a test that asks a sentinel after its client failed over must wait for that sentinel too.
     */
    public void awaitPromoted(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - end < 0) {
            try {
                if (currentMasterPort() == replica.port() && replica.command("ROLE").startsWith("master")) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // a sentinel busy failing over
            }
            sleep(20);
        }
        throw new IllegalStateException("the sentinels did not promote the replica (port " + replica.port() + ") within "
                + timeout.toMillis() + " ms");
    }

    /**
     * Waits (up to 20 s) until the replica is linked to its master: after the deployment starts, or after the replica
     * was paused and resumed.
     */
    public void awaitReplicaInSync() {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < end) {
            if (replica.command("INFO", "replication").contains("master_link_status:up")) {
                return;
            }
            sleep(50);
        }
        throw new IllegalStateException("the replica did not connect to its master");
    }

    @Override
    public void close() {
        sentinels.forEach(Sentinel::close);
        replica.close();
        master.close();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A {@code redis-server --sentinel} process; sentinels need a writable configuration file. */
    private static final class Sentinel implements AutoCloseable {

        private final int port;
        private final Path dir;
        private final Process process;

        private Sentinel(int port, Path dir, Process process) {
            this.port = port;
            this.dir = dir;
            this.process = process;
        }

        static Sentinel start(RedisServerProcess master) {
            try {
                int port = RedisServerProcess.freePort();
                Path dir = Files.createTempDirectory("redis-lock-sentinel-");
                Path conf = dir.resolve("sentinel.conf");
                Files.writeString(conf, String.join("\n",
                        "port " + port,
                        "bind 127.0.0.1",
                        "dir " + dir,
                        "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 2",
                        "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                        "sentinel failover-timeout " + MASTER_NAME + " 5000",
                        "sentinel parallel-syncs " + MASTER_NAME + " 1", ""));
                Process process = new ProcessBuilder(RedisServerProcess.binary().toString(), conf.toString(), "--sentinel")
                        .directory(dir.toFile()).redirectErrorStream(true)
                        .redirectOutput(dir.resolve("sentinel.log").toFile()).start();
                Sentinel sentinel = new Sentinel(port, dir, process);
                sentinel.awaitReady();
                return sentinel;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        String command(String... args) {
            return RedisServerProcess.command("127.0.0.1", port, args);
        }

        private void awaitReady() {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < end) {
                try {
                    if ("PONG".equals(command("PING"))) {
                        return;
                    }
                } catch (RuntimeException notYet) {
                    // starting
                }
                sleep(20);
            }
            throw new IllegalStateException("sentinel on port " + port + " did not start");
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a temp directory left behind is harmless
            }
        }
    }
}
