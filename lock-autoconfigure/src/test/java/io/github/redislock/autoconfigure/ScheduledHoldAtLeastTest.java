package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.OnFailure;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Two instances of an app (two Spring contexts, each with its own lock client) schedule one job every second; one
 * instance's clock is 300 ms behind, so its ticks fire 300 ms late. With {@code holdAtLeast} the job runs exactly
 * once per tick; without it, the late instance runs most ticks a second time (the control, which shows the test can
 * fail).
 */
@WithRedis
class ScheduledHoldAtLeastTest {

    static RedisServerProcess server;

    /** Every run of either job: instance, tick (the second its own clock fired it in), real start and end. */
    static final ConcurrentLinkedQueue<Run> runs = new ConcurrentLinkedQueue<>();

    record Run(String instance, long tick, long startMillis, long endMillis) {
    }

    @Test
    void withHoldAtLeastTheJobRunsExactlyOncePerTickWhenOneInstanceFires300msLate() throws Exception {
        Map<Long, List<Run>> byTick = runTwoInstances(HeldJob.class, 20);
        byTick.forEach((tick, inTick) -> assertThat(inTick).as("runs of tick %d", tick).hasSize(1));
        List<Run> ordered = byTick.values().stream().map(list -> list.get(0)).toList();
        for (int i = 1; i < ordered.size(); i++) {
            assertThat(ordered.get(i).startMillis()).as("runs never overlap").isGreaterThanOrEqualTo(ordered.get(i - 1).endMillis());
        }
        Map<String, Long> perInstance = ordered.stream().collect(Collectors.groupingBy(Run::instance, Collectors.counting()));
        long maxLateMs = ordered.stream().mapToLong(run -> run.startMillis() - run.tick() * 1000
                - ("b".equals(run.instance()) ? 300 : 0)).max().orElseThrow();
        System.out.println("holdAtLeast 700ms, ticks every 1s, instance b 300 ms late: " + byTick.size()
                + " ticks, runs per instance " + perInstance + ", latest start after its tick " + maxLateMs + " ms");
    }

    @Test
    void withoutHoldAtLeastTheLateInstanceRunsTheSameTickAgain() throws Exception {
        Map<Long, List<Run>> byTick = runTwoInstances(UnheldJob.class, 5);
        long doubled = byTick.values().stream().filter(inTick -> inTick.size() > 1).count();
        System.out.println("without holdAtLeast: " + doubled + " of " + byTick.size() + " ticks ran twice");
        assertThat(doubled).as("ticks run by both instances").isPositive();
    }

    /** Starts instance a (on time) and b (300 ms late), collects {@code ticks} whole ticks after both run, stops both. */
    private static Map<Long, List<Run>> runTwoInstances(Class<?> job, int ticks) throws Exception {
        runs.clear();
        List<ConfigurableApplicationContext> apps = new ArrayList<>();
        try {
            apps.add(start(job, "a", Duration.ZERO));
            apps.add(start(job, "b", Duration.ofMillis(-300)));
            long first = System.currentTimeMillis() / 1000 + 3; // whole ticks after both run, past start-up's load
            long last = first + ticks - 1;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(ticks + 15);
            while (System.currentTimeMillis() < (last + 2) * 1000 && System.nanoTime() < end) {
                Thread.sleep(100); // the ticks are the test: it waits for wall-clock seconds to pass
            }
            Map<Long, List<Run>> byTick = new TreeMap<>();
            for (Run run : runs) {
                if (run.tick() >= first && run.tick() <= last) {
                    byTick.computeIfAbsent(run.tick(), t -> new ArrayList<>()).add(run);
                }
            }
            assertThat(byTick).as("every tick ran").hasSize(ticks);
            return byTick;
        } finally {
            apps.forEach(ConfigurableApplicationContext::close);
        }
    }

    private static ConfigurableApplicationContext start(Class<?> job, String instance, Duration clockOffset) {
        return new SpringApplicationBuilder(App.class, job).web(WebApplicationType.NONE).properties(
                "spring.main.banner-mode=off", "spring.data.redis.host=" + server.host(),
                "spring.data.redis.port=" + server.port(), "instance=" + instance,
                "clock-offset-ms=" + clockOffset.toMillis()).run();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class App {

        /** The instance's scheduler, on a clock {@code clock-offset-ms} off: behind fires every tick late. */
        @Bean
        ThreadPoolTaskScheduler taskScheduler(org.springframework.core.env.Environment env) {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setClock(Clock.offset(Clock.systemDefaultZone(),
                    Duration.ofMillis(env.getRequiredProperty("clock-offset-ms", Long.class))));
            scheduler.setThreadNamePrefix(env.getRequiredProperty("instance") + "-tick-");
            return scheduler;
        }
    }

    abstract static class Job {

        private final String instance;
        private final Clock clock;

        Job(org.springframework.core.env.Environment env) {
            this.instance = env.getRequiredProperty("instance");
            this.clock = Clock.offset(Clock.systemDefaultZone(),
                    Duration.ofMillis(env.getRequiredProperty("clock-offset-ms", Long.class)));
        }

        void work() throws InterruptedException {
            long start = System.currentTimeMillis();
            long tick = (clock.millis() + 500) / 1000; // the second its clock fired it at, give or take half a second
            Thread.sleep(100); // the job's work
            runs.add(new Run(instance, tick, start, System.currentTimeMillis()));
        }
    }

    static class HeldJob extends Job {

        HeldJob(org.springframework.core.env.Environment env) {
            super(env);
        }

        @Scheduled(cron = "* * * * * *")
        @DistributedLock(name = "report", waitTime = "0s", onFailure = OnFailure.SKIP, holdAtLeast = "700ms")
        public void run() throws InterruptedException {
            work();
        }
    }

    static class UnheldJob extends Job {

        UnheldJob(org.springframework.core.env.Environment env) {
            super(env);
        }

        @Scheduled(cron = "* * * * * *")
        @DistributedLock(name = "report-unheld", waitTime = "0s", onFailure = OnFailure.SKIP)
        public void run() throws InterruptedException {
            work();
        }
    }
}
