package io.github.redislock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Two application contexts (two instances of one application, each with its own Redis client and lock template) run
 * the same {@code @Scheduled @SchedulerLock} job every second: each tick runs exactly once, on one of them (none twice,
 * none skipped), and no two runs overlap.
 */
@WithRedis
class ScheduledJobAcrossInstancesTest {

    static final int TICKS = 6;

    static RedisServerProcess server;

    /** One run of the job: which instance, when it started (wall clock, ms), when it entered and left (nanoTime). */
    record Run(String instance, long startMillis, long enter, long exit) {
    }

    static final List<Run> RUNS = new ArrayList<>();

    @Test
    void eachTickRunsExactlyOnceAcrossTwoInstances() throws InterruptedException {
        try (TestRedis redisA = new TestRedis(server); TestRedis redisB = new TestRedis(server);
                AnnotationConfigApplicationContext a = instance("a", redisA.locks);
                AnnotationConfigApplicationContext b = instance("b", redisB.locks)) {
            // both instances are up: count the ticks from the second after next
            long firstTick = (System.currentTimeMillis() / 1000 + 2) * 1000;
            long end = firstTick + TICKS * 1000L - 500;
            Thread.sleep(end - System.currentTimeMillis());
            a.close();
            b.close();
            List<Run> runs;
            synchronized (RUNS) {
                runs = RUNS.stream().filter(run -> run.startMillis() >= firstTick - 500 && run.startMillis() < end).toList();
            }
            Map<Long, List<Run>> byTick = new TreeMap<>();
            for (Run run : runs) {
                long tick = Math.round((run.startMillis() - firstTick) / 1000.0);
                byTick.computeIfAbsent(tick, t -> new ArrayList<>()).add(run);
            }
            assertThat(Intervals.maxConcurrency(runs, Run::enter, Run::exit)).as("runs at once, of %s", runs).isEqualTo(1);
            assertThat(byTick.keySet()).as("ticks run, of %s", runs).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
            assertThat(byTick.values()).as("runs per tick").allSatisfy(tickRuns -> assertThat(tickRuns).hasSize(1));
        }
    }

    private static AnnotationConfigApplicationContext instance(String name, RedisLockTemplate locks) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean("instanceName", String.class, () -> name);
        // the template's life is the test's, not the context's
        context.registerBean(RedisLockTemplate.class, () -> locks, definition -> definition.setDestroyMethodName(""));
        context.register(Instance.class);
        context.refresh();
        return context;
    }

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "10s")
    static class Instance {

        @Bean
        LockProvider lockProvider(RedisLockTemplate locks) {
            return new RedisLockTemplateLockProvider(locks);
        }

        @Bean
        ReportJob reportJob(String instanceName) {
            return new ReportJob(instanceName);
        }
    }

    static class ReportJob {

        private final String instance;

        ReportJob(String instance) {
            this.instance = instance;
        }

        /**
         * Every second on the wall clock, so both instances fire together, as servers whose clocks agree do; lockAtLeastFor
         * half the period: a tick's runs may fire that far apart on the two instances and still be one.
         */
        @Scheduled(cron = "* * * * * *")
        @SchedulerLock(name = "report", lockAtMostFor = "5s", lockAtLeastFor = "500ms")
        public void report() throws InterruptedException {
            long startMillis = System.currentTimeMillis();
            long enter = System.nanoTime();
            Thread.sleep(20);
            long exit = System.nanoTime();
            synchronized (RUNS) {
                RUNS.add(new Run(instance, startMillis, enter, exit));
            }
        }
    }
}
