package io.github.redislock.core;

import java.lang.reflect.Method;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where {@link AsyncHold}s wait for their locks and park while their work runs, so that no caller's thread (an event
 * loop, say) ever blocks on a lock: one thread per asynchronous acquisition in flight. On Java 21 and later these are
 * virtual threads, which cost a few hundred bytes while they park; on Java 17, daemon platform threads from a cached
 * pool (idle ones end after a minute), as many as there are asynchronous locked calls at once.
 */
public final class AsyncLockExecutor {

    private AsyncLockExecutor() {
    }

    /** A new virtual thread per hold on Java 21+, else the cached daemon pool; threads are named {@code redis-lock-async-N}. */
    public static Executor create() {
        ThreadFactory virtual = virtualThreadFactory();
        if (virtual != null) {
            return command -> virtual.newThread(command).start();
        }
        return platformThreads();
    }

    /** Whether {@link #create()} gives virtual threads on this JVM. */
    public static boolean usesVirtualThreads() {
        return virtualThreadFactory() != null;
    }

    private static Executor platformThreads() {
        AtomicLong count = new AtomicLong();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
                runnable -> {
                    Thread thread = new Thread(runnable, "redis-lock-async-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        return pool;
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
