package io.github.redislock.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The ledger (fencing tokens), the scheduled job's runs, and the programmatic template. */
@RestController
public class SampleController {

    private final LedgerService ledger;
    private final StaleWriteDemo staleWriteDemo;
    private final ReportJob reportJob;
    private final RedisLockTemplate locks;
    private final String instanceId;

    public SampleController(LedgerService ledger, StaleWriteDemo staleWriteDemo, ReportJob reportJob,
            RedisLockTemplate locks, SampleInstance instance) {
        this.ledger = ledger;
        this.staleWriteDemo = staleWriteDemo;
        this.reportJob = reportJob;
        this.locks = locks;
        this.instanceId = instance.id();
    }

    @PostMapping("/ledger/{account}/deposit")
    public LedgerService.Deposit deposit(@PathVariable String account, @RequestParam long amount) {
        return ledger.deposit(account, amount, 0);
    }

    @PostMapping("/ledger/{account}/stale-write-demo")
    public StaleWriteDemo.Result staleWrite(@PathVariable String account) throws InterruptedException {
        return staleWriteDemo.run(account);
    }

    @GetMapping("/jobs/report/runs")
    public Map<String, Object> reportRuns() {
        List<String> runs = reportJob.recentRuns();
        return Map.of("thisInstance", instanceId, "recentRuns", runs);
    }

    /** {@code RedisLockTemplate.execute}: where an annotation does not fit. */
    @PostMapping("/programmatic/{key}")
    public Map<String, Object> programmatic(@PathVariable String key, @RequestParam(defaultValue = "100") long workMillis)
            throws InterruptedException {
        return locks.execute("programmatic:" + key, LockOptions.waitFor(Duration.ofSeconds(5)), lock -> {
            Thread.sleep(workMillis);
            return Map.of("key", lock.key(), "fencingToken", lock.fencingToken(), "heldBy", instanceId);
        });
    }
}
