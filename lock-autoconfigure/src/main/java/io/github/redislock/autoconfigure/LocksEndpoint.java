package io.github.redislock.autoconfigure;

import java.util.List;

import io.github.redislock.core.RedisLockDiagnostics;
import io.github.redislock.core.RedisLockTemplate;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/locks}: the distributed locks this instance holds now, and its callers waiting for one. Times
 * are ISO-8601 instants and milliseconds.
 */
@Endpoint(id = "locks")
public class LocksEndpoint {

    private final RedisLockTemplate template;

    public LocksEndpoint(RedisLockTemplate template) {
        this.template = template;
    }

    @ReadOperation
    public LocksDescriptor locks() {
        RedisLockDiagnostics diagnostics = template.diagnostics();
        long now = System.currentTimeMillis();
        List<HeldLockDescriptor> held = diagnostics.heldLocks().stream()
                .map(lock -> new HeldLockDescriptor(lock.key(), lock.name(), lock.type().tag(), lock.fencingToken(),
                        lock.heldSince().toString(), now - lock.heldSince().toEpochMilli(),
                        lock.leaseLeft() == null ? null : lock.leaseLeft().toMillis(), lock.renewing(), lock.thread(),
                        lock.heldUntil() == null ? "held" : "held until " + lock.heldUntil() + " (holdAtLeast)"))
                .toList();
        List<WaiterDescriptor> waiters = diagnostics.waiters().stream()
                .map(waiter -> new WaiterDescriptor(waiter.key(), waiter.name(), waiter.type().tag(), waiter.since().toString(),
                        now - waiter.since().toEpochMilli(), waiter.thread()))
                .toList();
        return new LocksDescriptor(template.clientId(), held, waiters);
    }

    /** What the endpoint shows: this instance's client id, its held locks, its waiters. */
    public record LocksDescriptor(String clientId, List<HeldLockDescriptor> held, List<WaiterDescriptor> waiting) {
    }

    /**
     * One held lock; {@code leaseLeftMs} is {@code null} when not known. {@code state} is {@code held} while its
     * holder holds it, or {@code held until <instant> (holdAtLeast)} once the holder released it before its minimum
     * hold ended: Redis keeps it until then ({@code thread} is the one that held it).
     */
    public record HeldLockDescriptor(String key, String name, String type, long fencingToken, String heldSince,
            long heldForMs, @Nullable Long leaseLeftMs, boolean renewing, String thread, String state) {
    }

    /** One caller waiting for a lock. */
    public record WaiterDescriptor(String key, String name, String type, String since, long waitingForMs, String thread) {
    }
}
