package io.github.redislock.core;

import java.time.Duration;

import io.github.redislock.test.Await;

/** What a test sees of the threads of this JVM queued for a key's local lock, in front of the Redis lock. */
final class LocalQueue {

    private LocalQueue() {
    }

    /** Waits up to 5 s until at least {@code threads} threads of {@code template}'s client queue for {@code key}. */
    static void awaitQueued(RedisLockTemplate template, String key, int threads) throws InterruptedException {
        Await.until(() -> {
            LocalLock lock = template.localLock(key);
            return lock != null && lock.mutex.getQueueLength() >= threads;
        }, Duration.ofSeconds(5), threads + " thread(s) queued for '" + key + "' in this JVM");
    }
}
