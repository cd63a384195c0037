package io.github.redislock.autoconfigure;

import java.time.Duration;

import io.github.redislock.core.RedisLockConfig;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * Distributed lock settings under {@code redis-lock.*}. The defaults are written out (not taken from
 * {@link RedisLockConfig}) so the IDE metadata shows them; a test keeps the two equal.
 */
@ConfigurationProperties("redis-lock")
public class RedisLockProperties {

    /** Whether to enable distributed locks (the template, the @DistributedLock advisor and its checks). */
    private boolean enabled = true;

    /** Prefix of every Redis key and channel the locks use. */
    private String keyPrefix = "redis-lock";

    /** How long to wait for a lock when neither the annotation nor the options name a wait time. */
    private Duration waitTime = Duration.ofSeconds(10);

    /** Lease of a lock without an explicit lease; the watchdog renews it every third of it while held. */
    private Duration leaseTime = Duration.ofSeconds(30);

    /** Order of the @DistributedLock advisor; keep it lower than the transaction advisor's so the lock outlives the transaction. */
    private int advisorOrder = Ordered.HIGHEST_PRECEDENCE + 1000;

    /** Whether to let key expressions reference beans with '@name'. */
    private boolean allowBeanReferences = false;

    private final Metrics metrics = new Metrics();

    private final Observations observations = new Observations();

    private final ReplicaAck replicaAck = new ReplicaAck();

    private final Async async = new Async();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public Duration getWaitTime() {
        return waitTime;
    }

    public void setWaitTime(Duration waitTime) {
        this.waitTime = waitTime;
    }

    public Duration getLeaseTime() {
        return leaseTime;
    }

    public void setLeaseTime(Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    public int getAdvisorOrder() {
        return advisorOrder;
    }

    public void setAdvisorOrder(int advisorOrder) {
        this.advisorOrder = advisorOrder;
    }

    public boolean isAllowBeanReferences() {
        return allowBeanReferences;
    }

    public void setAllowBeanReferences(boolean allowBeanReferences) {
        this.allowBeanReferences = allowBeanReferences;
    }

    public ReplicaAck getReplicaAck() {
        return replicaAck;
    }

    public Async getAsync() {
        return async;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Observations getObservations() {
        return observations;
    }

    /** Micrometer metrics of the locks ({@code redis.lock.*}). */
    public static class Metrics {

        /** Whether to record Micrometer metrics of the locks (redis.lock.*) when Micrometer and a MeterRegistry are present. */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Micrometer observations (tracing spans) of lock waits. */
    public static class Observations {

        /** Whether to observe each wait for a lock (redis.lock.wait) when an ObservationRegistry is present. */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    RedisLockConfig toConfig() {
        return new RedisLockConfig(keyPrefix, waitTime, leaseTime,
                new RedisLockConfig.ReplicaAck(replicaAck.getReplicas(), replicaAck.getTimeout()),
                new RedisLockConfig.AsyncHolders(async.getMaxHolders(), async.getHolderWait()));
    }

    /** The holder threads of asynchronous locks (CompletableFuture, Mono/Flux, suspend functions) on Java 17-20. */
    public static class Async {

        /**
         * Most platform threads holding or waiting for asynchronous locks at once, on Java 17-20 (on Java 21+ holders are
         * virtual threads, without a bound).
         */
        private int maxHolders = 256;

        /** How long an asynchronous call waits for a free holder thread before it fails with RejectedExecutionException. */
        private Duration holderWait = Duration.ofSeconds(10);

        public int getMaxHolders() {
            return maxHolders;
        }

        public void setMaxHolders(int maxHolders) {
            this.maxHolders = maxHolders;
        }

        public Duration getHolderWait() {
            return holderWait;
        }

        public void setHolderWait(Duration holderWait) {
            this.holderWait = holderWait;
        }
    }

    /** Replica acknowledgement ({@code WAIT}) of every lock acquisition and renewal, for a master with replicas. */
    public static class ReplicaAck {

        /**
         * Number of replicas that must acknowledge each acquisition and renewal; 0 turns replica acknowledgement off.
         * An acquisition acknowledged by fewer is taken back and fails with LockNotAcquiredException.
         */
        private int replicas = 0;

        /** How long the master waits for the replicas' acknowledgement of each acquisition and renewal (WAIT timeout). */
        private Duration timeout = Duration.ofMillis(100);

        public int getReplicas() {
            return replicas;
        }

        public void setReplicas(int replicas) {
            this.replicas = replicas;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }
}
