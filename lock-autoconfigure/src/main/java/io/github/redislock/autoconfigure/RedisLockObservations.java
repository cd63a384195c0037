package io.github.redislock.autoconfigure;

import java.time.Duration;

import io.github.redislock.core.LockObserver;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Each wait for a lock as a Micrometer {@link Observation} named {@value #NAME} (a span for tracing, a child of the
 * caller's current observation), from the start of the wait until it ended: low-cardinality key values
 * {@code redis.lock.name}, {@code redis.lock.type} and {@code redis.lock.outcome} ({@code acquired}, {@code timeout},
 * {@code error}), the key as the high-cardinality {@code redis.lock.key}; a failure is the observation's error.
 */
public final class RedisLockObservations implements LockObserver {

    public static final String NAME = "redis.lock.wait";

    private final ObservationRegistry registry;

    public RedisLockObservations(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public Acquisition acquiring(LockEvent lock) {
        if (registry.isNoop()) {
            return Acquisition.NONE;
        }
        Observation observation = Observation.createNotStarted(NAME, registry)
                .contextualName("lock wait " + lock.name())
                .lowCardinalityKeyValue("redis.lock.name", lock.name())
                .lowCardinalityKeyValue("redis.lock.type", lock.type().tag())
                .highCardinalityKeyValue("redis.lock.key", lock.key())
                .start();
        return new Acquisition() {
            @Override
            public void acquired(Duration waited) {
                observation.lowCardinalityKeyValue("redis.lock.outcome", "acquired").stop();
            }

            @Override
            public void notAcquired(Duration waited, @Nullable Throwable failure) {
                observation.lowCardinalityKeyValue("redis.lock.outcome", failure == null ? "timeout" : "error");
                if (failure != null) {
                    observation.error(failure);
                }
                observation.stop();
            }
        };
    }
}
