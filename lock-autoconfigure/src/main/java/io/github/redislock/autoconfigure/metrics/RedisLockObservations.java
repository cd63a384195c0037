package io.github.redislock.autoconfigure.metrics;

import java.time.Duration;
import java.util.Map;

import io.github.redislock.core.LockObserver;
import io.github.redislock.core.LockOperations;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Each wait for a lock of every lock backend ({@link LockOperations} bean) as a Micrometer {@link Observation} named
 * {@value #NAME} (a span for tracing, a child of the caller's current observation), from the start of the wait until
 * it ended: low-cardinality key values {@code redis.lock.name}, {@code redis.lock.type},
 * {@value #LOCKS_KEY} (the backend's bean name) and {@code redis.lock.outcome} ({@code acquired}, {@code timeout},
 * {@code error}), the key as the high-cardinality {@code redis.lock.key}; a failure is the observation's error.
 */
public final class RedisLockObservations {

    public static final String NAME = "redis.lock.wait";
    /** The key value naming the backend's bean. */
    public static final String LOCKS_KEY = "redis.lock.locks";

    /**
     * Registers an observer on each backend.
     *
     * @param backends the lock backends by bean name
     */
    public RedisLockObservations(ObservationRegistry registry, Map<String, ? extends LockOperations> backends) {
        backends.forEach((name, backend) -> backend.addObserver(new BackendObservations(registry, name)));
    }

    /** The observations of one backend's waits. */
    private record BackendObservations(ObservationRegistry registry, String beanName) implements LockObserver {

        @Override
        public Acquisition acquiring(LockEvent lock) {
            if (registry.isNoop()) {
                return Acquisition.NONE;
            }
            Observation observation = Observation.createNotStarted(NAME, registry)
                    .contextualName("lock wait " + lock.name())
                    .lowCardinalityKeyValue("redis.lock.name", lock.name())
                    .lowCardinalityKeyValue("redis.lock.type", lock.type().tag())
                    .lowCardinalityKeyValue(LOCKS_KEY, beanName)
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
}
