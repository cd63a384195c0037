package io.github.redislock.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A Redis Cluster of real {@code redis-server} processes on free loopback ports (masters only, all
 * 16384 slots assigned), created with {@code redis-cli --cluster create}.
 */
public final class RedisClusterProcesses implements AutoCloseable {

    private final List<RedisServerProcess> masters;

    private RedisClusterProcesses(List<RedisServerProcess> masters) {
        this.masters = masters;
    }

    /** Starts {@code size} (at least 3) cluster masters and waits until the cluster state is ok. */
    public static RedisClusterProcesses start(int size) {
        List<RedisServerProcess> masters = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                masters.add(RedisServerProcess.start(List.of("--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-node-timeout", "2000")));
            }
            List<String> create = new ArrayList<>(List.of(redisCli().toString(), "--cluster", "create"));
            masters.forEach(m -> create.add(m.host() + ":" + m.port()));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            run(create, masters.get(0).dir());
            RedisClusterProcesses cluster = new RedisClusterProcesses(masters);
            cluster.awaitOk();
            return cluster;
        } catch (RuntimeException e) {
            masters.forEach(RedisServerProcess::close);
            throw e;
        }
    }

    public List<RedisServerProcess> masters() {
        return masters;
    }

    /** {@code host:port} of every master, for {@code spring.data.redis.cluster.nodes}. */
    public List<String> nodes() {
        return masters.stream().map(m -> m.host() + ":" + m.port()).toList();
    }

    /** The master whose slot holds {@code key} now; the key must exist. */
    public RedisServerProcess masterHolding(String key) {
        String slot = masters.get(0).command("CLUSTER", "KEYSLOT", key);
        for (RedisServerProcess master : masters) {
            if (!master.command("CLUSTER", "COUNTKEYSINSLOT", slot).equals("0")) {
                return master;
            }
        }
        throw new IllegalStateException("no master holds " + key);
    }

    /** Which master serves each hash slot now, from each master's own {@code CLUSTER NODES} line. */
    public Map<Integer, RedisServerProcess> masterOfSlot() {
        Map<Integer, RedisServerProcess> owners = new HashMap<>();
        for (RedisServerProcess master : masters) {
            String myself = master.command("CLUSTER", "NODES").lines().filter(line -> line.contains("myself"))
                    .findFirst().orElseThrow();
            String[] fields = myself.split(" ");
            for (int f = 8; f < fields.length; f++) {
                if (fields[f].startsWith("[")) {
                    continue; // a slot being migrated or imported
                }
                String[] range = fields[f].split("-");
                int from = Integer.parseInt(range[0]);
                int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                for (int slot = from; slot <= to; slot++) {
                    owners.put(slot, master);
                }
            }
        }
        return owners;
    }

    private void awaitOk() {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            boolean ok = masters.stream().allMatch(m -> m.command("CLUSTER", "INFO").contains("cluster_state:ok"));
            if (ok) {
                return;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("cluster did not reach cluster_state:ok: " + masters.get(0).command("CLUSTER", "INFO"));
    }

    /** redis-cli next to the redis-server binary, else on the PATH (the embedded Redis 6.2 comes without one). */
    private static Path redisCli() {
        Path cli = RedisServerProcess.binary().resolveSibling("redis-cli");
        if (Files.isExecutable(cli)) {
            return cli;
        }
        @Nullable Path onPath = RedisServerProcess.onPath("redis-cli");
        if (onPath == null) {
            throw new IllegalStateException("redis-cli is needed to create a cluster and is neither next to "
                    + RedisServerProcess.binary() + " nor on the PATH");
        }
        return onPath;
    }

    private static void run(List<String> command, Path dir) {
        try {
            Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("cluster-create.log").toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("redis-cli --cluster create failed: " + Files.readString(dir.resolve("cluster-create.log")));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        masters.forEach(RedisServerProcess::close);
    }
}
