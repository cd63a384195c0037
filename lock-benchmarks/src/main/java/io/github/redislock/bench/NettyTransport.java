package io.github.redislock.bench;

import java.util.List;

import io.netty.channel.epoll.Epoll;
import org.redisson.config.Config;
import org.redisson.config.TransportMode;

/**
 * Which Netty transport the Netty-based clients (Lettuce, and through it Spring Integration's Lettuce rows; Redisson)
 * run on: Netty's native epoll transport where it loads (the default: docs/deployments.md recommends it to Lettuce
 * users), or Java NIO with {@code -Dbench.netty-transport=nio}. Lettuce takes epoll by itself when it is on the class
 * path; Redisson only when configured to. Worker JVMs get the same choice.
 */
final class NettyTransport {

    private static final String PROPERTY = "bench.netty-transport";
    private static final boolean NATIVE = !"nio".equals(System.getProperty(PROPERTY, "native"));

    private NettyTransport() {
    }

    /** Call first in a main method, before Lettuce looks for epoll. */
    static void apply() {
        if (!NATIVE) {
            System.setProperty("io.lettuce.core.epoll", "false");
        }
    }

    static boolean isNative() {
        return NATIVE && Epoll.isAvailable();
    }

    static Config redisson(Config config) {
        if (isNative()) {
            config.setTransportMode(TransportMode.EPOLL);
        }
        return config;
    }

    /** The system property that gives a worker JVM this JVM's choice. */
    static List<String> workerArgs() {
        return List.of("-D" + PROPERTY + "=" + (NATIVE ? "native" : "nio"));
    }

    /** For a report's header. */
    static String describe() {
        return isNative() ? "Netty's native epoll transport (Lettuce, Redisson)"
                : "Java NIO (Lettuce, Redisson; -Dbench.netty-transport=nio"
                        + (NATIVE ? ", or epoll did not load: " + Epoll.unavailabilityCause() : "") + ")";
    }
}
