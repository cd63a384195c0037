package io.github.redislock.autoconfigure;

import io.github.redislock.core.RedisLockTemplate;
import org.springframework.context.SmartLifecycle;

/**
 * Closes the lock template (its release subscription and watchdog) when the application stops, just
 * before the Redis connection factory stops (phase 0): closed later, the subscription would be handed
 * back to a connection pool that is already gone. Everything with a higher phase (the web server, the
 * task scheduler) has stopped by then, so locks work until the application's own work is done.
 */
final class RedisLockTemplateLifecycle implements SmartLifecycle {

    /** One above the connection factories' phase, so this stops right before them. */
    static final int PHASE = 1;

    private final RedisLockTemplate template;
    private volatile boolean running = true;

    RedisLockTemplateLifecycle(RedisLockTemplate template) {
        this.template = template;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        template.close();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
