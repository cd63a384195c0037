package io.github.redislock.autoconfigure.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedisLockDiagnostics;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/locks}: the distributed locks this instance holds now, and its callers waiting for one, under the
 * bean name of each lock backend ({@link LockOperations} bean, the name {@code @DistributedLock(locks = ...)} takes),
 * as Boot's {@code caches} endpoint lists each cache manager; {@code /actuator/locks/{name}} shows one backend. Times
 * are ISO-8601 instants and milliseconds.
 */
@Endpoint(id = "locks")
public class LocksEndpoint {

    private final Map<String, ? extends LockOperations> backends;

    /** @param backends the lock backends by bean name */
    public LocksEndpoint(Map<String, ? extends LockOperations> backends) {
        this.backends = Map.copyOf(backends);
    }

    @ReadOperation
    public LocksDescriptor locks() {
        Map<String, BackendDescriptor> described = new LinkedHashMap<>();
        backends.keySet().stream().sorted().forEach(name -> described.put(name, describe(backends.get(name))));
        return new LocksDescriptor(described);
    }

    /** One backend's locks, or {@code null} (404) when there is no backend of that name. */
    @ReadOperation
    public @Nullable BackendDescriptor backend(@Selector String name) {
        LockOperations backend = backends.get(name);
        return backend == null ? null : describe(backend);
    }

    private static BackendDescriptor describe(LockOperations backend) {
        RedisLockDiagnostics diagnostics = backend.diagnostics();
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
        return new BackendDescriptor(backend.clientId(), held, waiters);
    }

    /** What the endpoint shows: each lock backend by bean name. */
    public record LocksDescriptor(Map<String, BackendDescriptor> backends) {
    }

    /** One backend: this instance's client id there, its held locks, its waiters. */
    public record BackendDescriptor(String clientId, List<HeldLockDescriptor> held, List<WaiterDescriptor> waiting) {
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
