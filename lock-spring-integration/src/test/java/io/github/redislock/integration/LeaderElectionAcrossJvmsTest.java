package io.github.redislock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Intervals;
import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election across JVMs with Spring Integration's {@code LockRegistryLeaderInitiator} over
 * {@link RedisLockOperationsRegistry}: two application instances in child JVMs ({@link LeaderJvm}) at a time, the
 * leader killed with SIGKILL twice, a fresh instance started after each kill. Each instance prints when it was granted
 * and revoked leadership (this machine's clock, microseconds); a killed leader's leadership ends when its process is
 * gone. The test checks from those intervals that there is never more than one leader, that a follower never takes
 * over from a live leader, and that a new leader is granted within one watchdog lease (plus {@link #MARGIN_MILLIS}) of
 * each kill. A second test pauses the leader past its lease instead, the limit the docs describe.
 */
@WithRedis
class LeaderElectionAcrossJvmsTest {

    /** The watchdog lease of every instance: a killed leader's lock expires at most this long after the kill. */
    private static final long LEASE_MILLIS = 1500;
    /**
     * What failover may take beyond the lease: the follower's wait for the lock ends at the lease's end in Redis (a
     * bounded re-check, no message comes from a dead holder), then the initiator calls the candidate; on a busy
     * two-core machine that is tens of milliseconds, so half a second is a safe bound.
     */
    private static final long MARGIN_MILLIS = 500;
    /** How long a follower is watched not to take over from a live leader: four leases, twelve renewals. */
    private static final long STEADY_MILLIS = 4 * LEASE_MILLIS;

    static RedisServerProcess server;

    private final List<Instance> instances = new ArrayList<>();

    /** A child JVM and what it printed. */
    private record Instance(String name, Process process, CompletableFuture<Void> ready, List<String> events,
            List<String> output) {

        List<String> granted() {
            return events.stream().filter(line -> line.startsWith("granted ")).toList();
        }
    }

    @AfterEach
    void stopInstances() {
        instances.forEach(instance -> instance.process().destroyForcibly());
    }

    @Test
    void exactlyOneOfTwoInstancesLeadsAtEveryMomentAndANewLeaderIsElectedWithinOneLeaseOfAKill() throws Exception {
        List<Interval> leaderships = new ArrayList<>();
        List<Long> tokens = new ArrayList<>();
        List<Long> failoverMillis = new ArrayList<>();

        Instance leader = start("a");
        awaitGranted(leader, 30_000);
        Instance follower = start("b");
        for (String next : List.of("c", "d")) {
            Thread.sleep(STEADY_MILLIS);
            assertThat(follower.granted()).as("the follower %s never leads while %s is alive (its output: %s)",
                    follower.name(), leader.name(), follower.output()).isEmpty();
            assertThat(leader.events()).as("the leader %s keeps leading", leader.name()).hasSize(1);

            long killedAt = LeaderJvm.epochMicros();
            leader.process().destroyForcibly(); // SIGKILL: no shutdown hook, no unlock; the lock expires with its lease
            assertThat(leader.process().waitFor(10, TimeUnit.SECONDS)).as("killed").isTrue();
            long goneAt = LeaderJvm.epochMicros();
            leaderships.add(new Interval(grantedAt(leader.granted().get(0)), goneAt));
            tokens.add(token(leader.granted().get(0)));

            String granted = awaitGranted(follower, LEASE_MILLIS + MARGIN_MILLIS + 10_000);
            long failover = (grantedAt(granted) - killedAt) / 1000;
            failoverMillis.add(failover);
            assertThat(grantedAt(granted)).as("the new leader %s is granted after the killed one is gone",
                    follower.name()).isGreaterThan(goneAt);
            assertThat(failover).as("failover after SIGKILL, within one lease (%d ms) + %d ms", LEASE_MILLIS,
                    MARGIN_MILLIS).isLessThanOrEqualTo(LEASE_MILLIS + MARGIN_MILLIS);

            leader = follower;
            follower = start(next);
        }
        Thread.sleep(STEADY_MILLIS);
        long endedAt = LeaderJvm.epochMicros();
        assertThat(follower.granted()).as("the last follower never leads").isEmpty();
        assertThat(leader.events()).as("the last leader still leads").hasSize(1);
        leaderships.add(new Interval(grantedAt(leader.granted().get(0)), endedAt));
        tokens.add(token(leader.granted().get(0)));

        System.out.println("Leader election across JVMs (lease " + LEASE_MILLIS + " ms): failover after SIGKILL took "
                + failoverMillis + " ms; fencing tokens of the leaders " + tokens);
        for (Instance instance : instances) {
            assertThat(instance.events()).as("%s was granted at most once and never revoked", instance.name())
                    .hasSizeLessThanOrEqualTo(1).allMatch(line -> line.startsWith("granted "));
        }
        assertThat(Intervals.maxConcurrency(leaderships)).as("leaders at once, from %s", leaderships).isEqualTo(1);
        assertThat(tokens).as("each leader's fencing token is greater than the one before").isSorted()
                .doesNotHaveDuplicates().allMatch(token -> token > 0);
    }

    /**
     * The limit the docs state: a leader paused (SIGSTOP, as a long GC pause) for longer than the lease loses its lock
     * and another instance is elected; once resumed, the paused one believes it leads until its next heartbeat finds
     * the lock lost. The test measures that window and checks that the new leader's fencing token is greater, so
     * storage that checks tokens refuses the stale leader.
     */
    @Test
    void aLeaderPausedPastItsLeaseIsReplacedAndOnResumingRevokesItselfWithinAHeartbeatWithALowerFencingToken()
            throws Exception {
        Instance paused = start("paused");
        String pausedGrant = awaitGranted(paused, 30_000);
        Instance other = start("other");
        Thread.sleep(LEASE_MILLIS);

        long pausedAt = LeaderJvm.epochMicros();
        signal(paused, "STOP");
        String otherGrant = awaitGranted(other, LEASE_MILLIS + MARGIN_MILLIS + 10_000);
        long takeover = (grantedAt(otherGrant) - pausedAt) / 1000;
        Thread.sleep(LEASE_MILLIS); // the new leader leads while the old one is still stopped
        long resumedAt = LeaderJvm.epochMicros();
        signal(paused, "CONT");
        String revoked = awaitEvent(paused, "revoked ", 10_000);
        long staleMillis = (grantedAt(revoked) - resumedAt) / 1000;

        System.out.println("Leader paused for " + (resumedAt - pausedAt) / 1000 + " ms (lease " + LEASE_MILLIS
                + " ms): replaced after " + takeover + " ms; on resuming it believed it led for another " + staleMillis
                + " ms; fencing tokens " + token(pausedGrant) + " then " + token(otherGrant));
        assertThat(takeover).as("the other instance leads within one lease of the pause")
                .isLessThanOrEqualTo(LEASE_MILLIS + MARGIN_MILLIS);
        assertThat(staleMillis).as("the resumed leader's stale leadership: at most a heartbeat, + %d ms", MARGIN_MILLIS)
                .isLessThanOrEqualTo(LeaderJvm.HEART_BEAT_MILLIS + MARGIN_MILLIS);
        assertThat(token(otherGrant)).as("the new leader's fencing token is above the paused one's")
                .isGreaterThan(token(pausedGrant));
        Thread.sleep(2 * LEASE_MILLIS);
        assertThat(paused.granted()).as("the resumed instance follows").hasSize(1);
        assertThat(other.events()).as("the new leader keeps leading").hasSize(1);
    }

    private static void signal(Instance instance, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(instance.process().pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -%s", signal).isTrue();
    }

    private Instance start(String name) throws IOException {
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xmx128m", "-cp", System.getProperty("java.class.path"),
                LeaderJvm.class.getName(), server.host(), Integer.toString(server.port()), Long.toString(LEASE_MILLIS),
                name)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Instance instance = new Instance(name, process, new CompletableFuture<>(),
                Collections.synchronizedList(new ArrayList<>()), Collections.synchronizedList(new ArrayList<>()));
        Thread reader = new Thread(() -> readOutput(instance), "leader-jvm-" + name + "-output");
        reader.setDaemon(true);
        reader.start();
        instances.add(instance);
        try {
            instance.ready().get(60, TimeUnit.SECONDS); // a JVM and a Spring context starting on a busy machine
        } catch (Exception e) {
            throw new AssertionError("instance " + name + " did not start: " + instance.output(), e);
        }
        return instance;
    }

    private static void readOutput(Instance instance) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(instance.process().getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.equals("ready")) {
                    instance.ready().complete(null);
                } else if (line.startsWith("granted ") || line.startsWith("revoked ")) {
                    instance.events().add(line);
                } else {
                    instance.output().add(line);
                }
            }
        } catch (IOException ended) {
            // the JVM was killed
        }
        instance.ready().completeExceptionally(new IllegalStateException("ended"));
    }

    private static String awaitGranted(Instance instance, long timeoutMillis) throws InterruptedException {
        return awaitEvent(instance, "granted ", timeoutMillis);
    }

    private static String awaitEvent(Instance instance, String event, long timeoutMillis) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            synchronized (instance.events()) {
                for (String line : instance.events()) {
                    if (line.startsWith(event)) {
                        return line;
                    }
                }
            }
            if (System.nanoTime() > end) {
                throw new AssertionError(instance.name() + " printed no '" + event.trim() + "' within " + timeoutMillis
                        + " ms; its output: " + instance.output());
            }
            Thread.sleep(1);
        }
    }

    private static long grantedAt(String granted) {
        return Long.parseLong(granted.split(" ")[1]);
    }

    private static long token(String granted) {
        return Long.parseLong(granted.split(" ")[2]);
    }
}
