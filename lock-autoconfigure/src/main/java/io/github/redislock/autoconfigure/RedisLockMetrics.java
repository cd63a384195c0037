package io.github.redislock.autoconfigure;

import java.time.Duration;

import io.github.redislock.core.LockObserver;
import io.github.redislock.core.RedisLockDiagnostics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of a {@link io.github.redislock.core.RedisLockTemplate}'s locks. Every meter is tagged with the
 * call's {@code name} (the annotation's {@code name}, else the method; {@code LockOptions.withName} for the
 * template), never the key, so their number stays bounded:
 * <ul>
 * <li>{@code redis.lock.acquire}: timer of the waits, tagged {@code outcome}: {@code acquired}, {@code timeout}
 * (another owner held it for the whole wait), {@code error} (Redis failed, or the wait was interrupted);</li>
 * <li>{@code redis.lock.held}: timer of how long locks were held, from acquisition to release;</li>
 * <li>{@code redis.lock.active}: gauge of the locks held now (untagged);</li>
 * <li>{@code redis.lock.lost}: counter of locks the watchdog found lost while held;</li>
 * <li>{@code redis.lock.renewals}: counter of watchdog renewals, tagged {@code outcome}: {@code renewed},
 * {@code failed}, {@code lost}.</li>
 * </ul>
 */
public final class RedisLockMetrics implements LockObserver {

    public static final String ACQUIRE = "redis.lock.acquire";
    public static final String HELD = "redis.lock.held";
    public static final String ACTIVE = "redis.lock.active";
    public static final String LOST = "redis.lock.lost";
    public static final String RENEWALS = "redis.lock.renewals";

    private final MeterRegistry registry;

    public RedisLockMetrics(MeterRegistry registry, RedisLockDiagnostics diagnostics) {
        this.registry = registry;
        Gauge.builder(ACTIVE, diagnostics, RedisLockDiagnostics::heldLockCount)
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
                .tag("name", lock.name()).register(registry).record(held);
    }

    @Override
    public void lost(LockEvent lock, String reason) {
        Counter.builder(LOST).description("Distributed locks found lost while held")
                .tag("name", lock.name()).register(registry).increment();
    }

    @Override
    public void renewal(LockEvent lock, RenewalOutcome outcome) {
        Counter.builder(RENEWALS).description("Lease renewals of held distributed locks by the watchdog")
                .tag("name", lock.name()).tag("outcome", outcome.tag()).register(registry).increment();
    }

    private Timer acquireTimer(LockEvent lock, String outcome) {
        return Timer.builder(ACQUIRE).description("Time spent waiting for distributed locks")
                .tag("name", lock.name()).tag("outcome", outcome).register(registry);
    }
}
