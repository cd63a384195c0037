package io.github.redislock.core;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;

/**
 * Where {@link AsyncHold}s wait for their locks and park while their work runs, so that no caller's thread (an event
 * loop, say) ever blocks on a lock: one thread per asynchronous acquisition in flight. On Java 21 and later these are
 * virtual threads, which cost a few hundred bytes while they park, as many as there are calls; on Java 17, daemon
 * platform threads, at most {@link RedisLockConfig.AsyncHolders#maxHolders()} at once (see {@link BoundedHolderThreads}).
 */
public final class AsyncLockExecutor {

    private AsyncLockExecutor() {
    }

    /**
     * A task an executor of {@link #create} may give up on without running it: told why instead. {@link AsyncHold}
     * submits these, so a call that found no free holder fails rather than waiting forever.
     */
    public interface Rejectable extends Runnable {

        /** The task will not run; called at most once, on whichever thread gave up on it. */
        void reject(RuntimeException reason);
    }

    /** {@link #create(RedisLockConfig.AsyncHolders)} with {@link RedisLockConfig.AsyncHolders#DEFAULTS}. */
    public static Executor create() {
        return create(RedisLockConfig.AsyncHolders.DEFAULTS);
    }

    /**
     * A new virtual thread per hold on Java 21+; else at most {@code holders.maxHolders()} daemon platform threads, a
     * call finding none free queued for up to {@code holders.holderWait()}. Threads are named {@code redis-lock-async-N}.
     */
    public static Executor create(RedisLockConfig.AsyncHolders holders) {
        ThreadFactory virtual = virtualThreadFactory();
        if (virtual != null) {
            return command -> virtual.newThread(command).start();
        }
        return new BoundedHolderThreads(holders.maxHolders(), holders.holderWait());
    }

    /** Whether {@link #create()} gives virtual threads on this JVM. */
    public static boolean usesVirtualThreads() {
        return virtualThreadFactory() != null;
    }

    /** Why a call found no free holder thread: the exception a {@link Rejectable} gets. */
    static RejectedExecutionException noFreeHolder(int maxHolders, Duration holderWait) {
        return new RejectedExecutionException("No holder thread for an asynchronous lock became free within "
                + Durations.format(holderWait) + " (redis-lock.async.holder-wait): all " + maxHolders
                + " (redis-lock.async.max-holders) hold or wait for locks of other asynchronous calls. Raise "
                + "redis-lock.async.max-holders or redis-lock.async.holder-wait, or run on Java 21+, where holders are "
                + "virtual threads without a bound");
    }

    /** {@code Thread.ofVirtual().name("redis-lock-async-", 1).factory()}, looked up because the build targets Java 17. */
    private static ThreadFactory virtualThreadFactory() {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> builderType = Class.forName("java.lang.Thread$Builder");
            Method name = builderType.getMethod("name", String.class, long.class);
            builder = name.invoke(builder, "redis-lock-async-", 1L);
            return (ThreadFactory) builderType.getMethod("factory").invoke(builder);
        } catch (NoSuchMethodException | ClassNotFoundException e) {
            return null; // Java 17-20
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Could not create virtual threads", e);
        }
    }
}
