package io.github.redislock.sample;

import java.time.Instant;
import java.util.List;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.OnFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A job every instance schedules at the same wall-clock moments; the lock lets exactly one instance
 * run each tick and the others skip it ({@code waitTime = "0s"}, {@code onFailure = SKIP}). The lock stays
 * held for at least 5 seconds after it was taken ({@code holdAtLeast}), even though the job ends sooner, so an
 * instance whose clock is up to that much behind (its tick fires later) finds it held and skips the same tick.
 */
@Component
public class ReportJob {

    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);
    static final String RUNS_KEY = "sample:report-job:runs";

    private final StringRedisTemplate redis;
    private final String instanceId;
    private final long workMillis;

    public ReportJob(StringRedisTemplate redis, SampleInstance instance,
            @Value("${sample.report-job.work-millis:2000}") long workMillis) {
        this.redis = redis;
        this.instanceId = instance.id();
        this.workMillis = workMillis;
    }

    @Scheduled(cron = "${sample.report-job.cron:*/10 * * * * *}")
    @DistributedLock(name = "sample:report-job", waitTime = "0s", onFailure = OnFailure.SKIP,
            holdAtLeast = "${sample.report-job.hold-at-least:5s}")
    public void run() throws InterruptedException {
        log.info("Report job runs on instance {}", instanceId);
        redis.opsForList().leftPush(RUNS_KEY, instanceId + " at " + Instant.now());
        redis.opsForList().trim(RUNS_KEY, 0, 49);
        Thread.sleep(workMillis); // the report's work
    }

    public List<String> recentRuns() {
        return redis.opsForList().range(RUNS_KEY, 0, 19);
    }
}
