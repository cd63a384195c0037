package io.github.redislock.autoconfigure.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedisLockDiagnostics;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of one lock backend ({@link LockOperations} bean): the {@code lock} entry of {@code /actuator/health}, or
 * {@code lock/<bean name>} for each of several backends. DOWN while a held lock's watchdog renewals have failed for
 * longer than a third of the lease (its next renewal was due a third of the lease after the last successful one, and
 * is overdue by more than another third), so the lock will be lost unless Redis answers soon; UP otherwise. Its
 * details name the locks at fault.
 */
public class RedisLockHealthIndicator implements HealthIndicator {

    private final LockOperations locks;

    public RedisLockHealthIndicator(LockOperations locks) {
        this.locks = locks;
    }

    @Override
    public Health health() {
        Duration limit = locks.config().watchdogLease().dividedBy(3);
        List<RedisLockDiagnostics.HeldLock> held = locks.diagnostics().heldLocks();
        List<Map<String, @Nullable Object>> failing = held.stream()
                .filter(lock -> lock.renewing() && lock.renewalOverdue().compareTo(limit) > 0)
                .map(lock -> {
                    Map<String, @Nullable Object> detail = new LinkedHashMap<>();
                    detail.put("key", lock.key());
                    detail.put("name", lock.name());
                    detail.put("renewalOverdueMs", lock.renewalOverdue().toMillis());
                    detail.put("leaseLeftMs", lock.leaseLeft() == null ? null : lock.leaseLeft().toMillis());
                    return detail;
                })
                .toList();
        Health.Builder health = failing.isEmpty() ? Health.up() : Health.down();
        health.withDetail("held", held.size()).withDetail("renewalOverdueLimitMs", limit.toMillis());
        if (!failing.isEmpty()) {
            health.withDetail("failingRenewals", failing);
        }
        return health.build();
    }
}
