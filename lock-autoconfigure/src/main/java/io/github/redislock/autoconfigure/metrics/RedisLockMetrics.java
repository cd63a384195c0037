package io.github.redislock.autoconfigure.metrics;

import java.time.Duration;
import java.util.Map;

import io.github.redislock.core.LockObserver;
import io.github.redislock.core.LockOperations;
import io.github.redislock.core.RedisLockDiagnostics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of the locks of every lock backend ({@link LockOperations} bean). Every meter is tagged
 * {@value #LOCKS_TAG} with the backend's bean name (the name {@code @DistributedLock(locks = ...)} takes, e.g.
 * {@code redisLockTemplate}; always, also with one backend, so a second one adds series rather than changing them),
 * and, except the gauge, with the call's {@code name} (the annotation's {@code name}, else the method;
 * {@code LockOptions.withName} for the template), never the key, so their number stays bounded:
 * <ul>
 * <li>{@code redis.lock.acquire}: timer of the waits, tagged {@code outcome}: {@code acquired}, {@code timeout}
 * (another owner held it for the whole wait), {@code error} (Redis failed, or the wait was interrupted);</li>
 * <li>{@code redis.lock.held}: timer of how long locks were held, from acquisition to release;</li>
 * <li>{@code redis.lock.active}: gauge of the locks held now;</li>
 * <li>{@code redis.lock.lost}: counter of locks the watchdog found lost while held;</li>
 * <li>{@code redis.lock.renewals}: counter of watchdog renewals, tagged {@code outcome}: {@code renewed},
 * {@code failed}, {@code lost}.</li>
 * </ul>
 */
public final class RedisLockMetrics {

    public static final String ACQUIRE = "redis.lock.acquire";
    public static final String HELD = "redis.lock.held";
    public static final String ACTIVE = "redis.lock.active";
    public static final String LOST = "redis.lock.lost";
    public static final String RENEWALS = "redis.lock.renewals";
    /** The tag naming the backend's bean. */
    public static final String LOCKS_TAG = "locks";

    /**
     * Registers the gauge of each backend and an observer on it that records the other meters.
     *
     * @param backends the lock backends by bean name
     */
    public RedisLockMetrics(MeterRegistry registry, Map<String, ? extends LockOperations> backends) {
        backends.forEach((name, backend) -> backend.addObserver(new BackendMeters(registry, backend.diagnostics(), name)));
    }

    /** The meters of one backend. */
    private static final class BackendMeters implements LockObserver {

        private final MeterRegistry registry;
        private final Tags backend;

        BackendMeters(MeterRegistry registry, RedisLockDiagnostics diagnostics, String beanName) {
            this.registry = registry;
            this.backend = Tags.of(LOCKS_TAG, beanName);
            Gauge.builder(ACTIVE, diagnostics, RedisLockDiagnostics::heldLockCount).tags(backend)
                    .description("Distributed locks held now by this instance").register(registry);
        }

        @Override
        public Acquisition acquiring(LockEvent lock) {
            return new Acquisition() {
                @Override
                public void acquired(Duration waited) {
                    acquireTimer(lock, "acquired").record(waited);
                }

                @Override
                public void notAcquired(Duration waited, @Nullable Throwable failure) {
                    acquireTimer(lock, failure == null ? "timeout" : "error").record(waited);
                }
            };
        }

        @Override
        public void released(LockEvent lock, Duration held) {
            Timer.builder(HELD).description("How long distributed locks were held, from acquisition to release")
                    .tags(backend).tag("name", lock.name()).register(registry).record(held);
        }

        @Override
        public void lost(LockEvent lock, String reason) {
            Counter.builder(LOST).description("Distributed locks found lost while held")
                    .tags(backend).tag("name", lock.name()).register(registry).increment();
        }

        @Override
        public void renewal(LockEvent lock, RenewalOutcome outcome) {
            Counter.builder(RENEWALS).description("Lease renewals of held distributed locks by the watchdog")
                    .tags(backend).tag("name", lock.name()).tag("outcome", outcome.tag()).register(registry).increment();
        }

        private Timer acquireTimer(LockEvent lock, String outcome) {
            return Timer.builder(ACQUIRE).description("Time spent waiting for distributed locks")
                    .tags(backend).tag("name", lock.name()).tag("outcome", outcome).register(registry);
        }
    }
}
