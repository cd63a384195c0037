package io.github.redislock.sample;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.github.redislock.test.RedisServerProcess;
import org.apache.commons.logging.Log;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The sample's first-run convenience (never part of the starter): when the user configured no Redis
 * and nothing answers on localhost:6379, start a real {@code redis-server} on a free port, point
 * {@code spring.data.redis.*} at it, and stop it when the application stops.
 * {@code sample.start-redis=false} turns this off.
 * <p>
 * The started server's port is written to a file in the temporary directory, so a second instance
 * started beside the first uses the same Redis instead of starting its own: two instances on two
 * Redis servers would never contend for a lock.
 */
public final class LocalRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

    private static final List<String> USER_REDIS_PROPERTIES = List.of("spring.data.redis.host", "spring.data.redis.port",
            "spring.data.redis.url", "spring.data.redis.sentinel.master", "spring.data.redis.cluster.nodes");

    private final Log log;

    public LocalRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
        this.log = logFactory.getLog(LocalRedisEnvironmentPostProcessor.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        startRedisIfNoneAnswers(environment, application, 6379,
                Path.of(System.getProperty("java.io.tmpdir"), "redis-lock-sample", "redis.port"));
    }

    /**
     * @param portFile where the port of a Redis started by a sample instance is shared with the next ones
     * @return the started server, or {@code null} when Redis is configured, answers, another instance's
     *         Redis answers, or starting is off
     */
    RedisServerProcess startRedisIfNoneAnswers(ConfigurableEnvironment environment, SpringApplication application,
            int defaultPort, Path portFile) {
        if (!environment.getProperty("sample.start-redis", Boolean.class, true)) {
            return null;
        }
        if (USER_REDIS_PROPERTIES.stream().anyMatch(environment::containsProperty) || answers("localhost", defaultPort)) {
            return null;
        }
        Integer shared = readPort(portFile);
        if (shared != null && answers("127.0.0.1", shared)) {
            log.info("No Redis answered on localhost:" + defaultPort + "; using the redis-server another sample instance "
                    + "started on port " + shared + " (it stops with that instance)");
            pointAt(environment, "127.0.0.1", shared);
            return null;
        }
        RedisServerProcess redis = RedisServerProcess.start();
        log.info("No Redis answered on localhost:" + defaultPort + ", so the sample started its own redis-server on port " + redis.port()
                + " (" + RedisServerProcess.binary() + "); set sample.start-redis=false to turn this off");
        pointAt(environment, redis.host(), redis.port());
        writePort(portFile, redis.port());
        Runnable stop = () -> {
            redis.close();
            if (Integer.valueOf(redis.port()).equals(readPort(portFile))) {
                try {
                    Files.deleteIfExists(portFile);
                } catch (IOException ignored) {
                    // a stale file names a port nobody answers on: the next instance starts its own
                }
            }
        };
        application.addListeners(event -> {
            if (event instanceof ContextClosedEvent) {
                stop.run();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "sample-redis-shutdown"));
        return redis;
    }

    private static void pointAt(ConfigurableEnvironment environment, String host, int port) {
        environment.getPropertySources().addFirst(new MapPropertySource("sample-local-redis",
                Map.of("spring.data.redis.host", host, "spring.data.redis.port", port)));
    }

    private static Integer readPort(Path portFile) {
        try {
            return Integer.valueOf(Files.readString(portFile).trim());
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    private void writePort(Path portFile, int port) {
        try {
            Files.createDirectories(portFile.getParent());
            Files.writeString(portFile, Integer.toString(port));
        } catch (IOException e) {
            log.warn("Could not record the sample Redis port in " + portFile + ": a second instance will start its own Redis");
        }
    }

    private static boolean answers(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 300);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE; // after application.yml and the command line are read
    }
}
