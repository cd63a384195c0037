package io.github.redislock.testing;

import io.github.redislock.test.RedisServerProcess;

/**
 * The {@code redis-server} the tests of this JVM share: started on a free loopback port at first use (the binary on
 * the PATH, else the one inside {@code com.github.codemonstur:embedded-redis}; never port 6379, no Docker), stopped
 * when the JVM exits. It keeps nothing on disk. Tests that must not see each other's keys use keys of their own, or
 * {@link #flushAll()}.
 */
public final class TestRedisServer {

    private static TestRedisServer shared;

    private final RedisServerProcess process;

    private TestRedisServer(RedisServerProcess process) {
        this.process = process;
    }

    /** The JVM's shared server, started now if it is not running yet. */
    public static synchronized TestRedisServer shared() {
        if (shared == null || !shared.process.isRunning()) {
            RedisServerProcess process = RedisServerProcess.start();
            Runtime.getRuntime().addShutdownHook(new Thread(process::close, "redis-lock-test-redis-stop"));
            shared = new TestRedisServer(process);
        }
        return shared;
    }

    /** {@code 127.0.0.1}. */
    public String host() {
        return process.host();
    }

    public int port() {
        return process.port();
    }

    /** {@code redis://127.0.0.1:port}, for {@code spring.data.redis.url}. */
    public String url() {
        return "redis://" + host() + ":" + port();
    }

    /** Sends one command and returns the reply as text (arrays as lines): for test assertions, not for speed. */
    public String command(String... args) {
        return process.command(args);
    }

    /** Deletes every key. */
    public void flushAll() {
        command("FLUSHALL");
    }

    @Override
    public String toString() {
        return "TestRedisServer[" + host() + ":" + port() + "]";
    }
}
