package io.github.redislock.sample;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
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
        startRedisIfNoneAnswers(environment, application, 6379);
    }

    /** @return the started server, or {@code null} when Redis is configured, answers, or starting is off */
    RedisServerProcess startRedisIfNoneAnswers(ConfigurableEnvironment environment, SpringApplication application,
            int defaultPort) {
        if (!environment.getProperty("sample.start-redis", Boolean.class, true)) {
            return null;
        }
        if (USER_REDIS_PROPERTIES.stream().anyMatch(environment::containsProperty) || answers("localhost", defaultPort)) {
            return null;
        }
        RedisServerProcess redis = RedisServerProcess.start();
        log.info("No Redis answered on localhost:" + defaultPort + ", so the sample started its own redis-server on port " + redis.port()
                + " (" + RedisServerProcess.binary() + "); set sample.start-redis=false to turn this off");
        environment.getPropertySources().addFirst(new MapPropertySource("sample-local-redis",
                Map.of("spring.data.redis.host", redis.host(), "spring.data.redis.port", redis.port())));
        application.addListeners(event -> {
            if (event instanceof ContextClosedEvent) {
                redis.close();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(redis::close, "sample-redis-shutdown"));
        return redis;
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
