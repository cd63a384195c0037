package io.github.redislock.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A TCP proxy in front of a test Redis whose forwarding, both ways, the test can hold back and let through again: what
 * is sent while it is held back is kept, in order, and delivered when it is let through, as a stalled network path
 * would deliver it. Used for one client's connections only (say a lock client's pub/sub connection), so one of its
 * connections can lag behind the others; or for all of a client's connections, of which {@link #holdBackCommands()}
 * holds back all but its subscriptions (told by the SUBSCRIBE they sent), so that one client of any driver can stop
 * reaching Redis while it still hears its messages.
 */
final class HoldBackProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final List<Socket> sockets = new ArrayList<>();
    private boolean heldBack;
    /** Whether {@link #heldBack} spares the connections that subscribed. */
    private boolean commandsOnly;
    private boolean closed;

    HoldBackProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "hold-back-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * A started, pooled Jedis connection factory to {@code host}:{@code port} whose timeouts outlast how long a test
     * holds a connection back, so no request fails meanwhile; the caller destroys it.
     */
    static JedisConnectionFactory jedisFactory(String host, int port) {
        return jedisFactory(host, port, Duration.ofSeconds(10));
    }

    private static JedisConnectionFactory jedisFactory(String host, int port, Duration readTimeout) {
        JedisClientConfiguration client = JedisClientConfiguration.builder().connectTimeout(Duration.ofSeconds(5))
                .readTimeout(readTimeout).usePooling().build();
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(host, port), client);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** {@link #jedisFactory(String, int)} through this proxy. */
    JedisConnectionFactory jedisFactory() {
        return jedisFactory(host(), port());
    }

    /** A factory through this proxy whose requests fail after {@code readTimeout} while it holds them back. */
    JedisConnectionFactory jedisFactory(Duration readTimeout) {
        return jedisFactory(host(), port(), readTimeout);
    }

    /**
     * A started Lettuce connection factory through this proxy as Spring Boot sets it up (one shared native connection),
     * whose calls fail after {@code commandTimeout} while it holds them back; the caller destroys it.
     */
    LettuceConnectionFactory lettuceFactory(Duration commandTimeout) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host(), port()),
                LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    String host() {
        return listener.getInetAddress().getHostAddress();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** From now on nothing is forwarded, either way, until {@link #letThrough()}. */
    synchronized void holdBack() {
        heldBack = true;
        commandsOnly = false;
    }

    /**
     * From now on nothing is forwarded, either way, on the connections that have not subscribed to a channel, until
     * {@link #letThrough()}: the client's commands stall while its messages still come.
     */
    synchronized void holdBackCommands() {
        heldBack = true;
        commandsOnly = true;
    }

    /** Forwards what was held back, and everything after it. */
    synchronized void letThrough() {
        heldBack = false;
        notifyAll();
    }

    private synchronized void awaitLetThrough(Route route) throws InterruptedException {
        while (heldBack && !(commandsOnly && route.subscribed) && !closed) {
            wait();
        }
    }

    /** One client connection, both ways: whether it sent a SUBSCRIBE (of any kind) so far. */
    private static final class Route {

        volatile boolean subscribed;

        /** Notes a SUBSCRIBE, PSUBSCRIBE or SSUBSCRIBE among the first {@code length} bytes the client sent. */
        void sent(byte[] bytes, int length) {
            if (!subscribed && new String(bytes, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1)
                    .toUpperCase(java.util.Locale.ROOT).contains("SUBSCRIBE")) {
                subscribed = true;
            }
        }
    }

    private void accept() {
        while (true) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(targetHost, targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                synchronized (this) {
                    sockets.add(client);
                    sockets.add(server);
                }
                Route route = new Route();
                pump(client, server, route, true);
                pump(server, client, route, false);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to, Route route, boolean fromClient) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                    if (fromClient) {
                        route.sent(buffer, read);
                    }
                    awaitLetThrough(route);
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // a side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "hold-back-proxy-pump");
        pump.setDaemon(true);
        pump.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        synchronized (this) {
            closed = true;
            notifyAll();
            sockets.forEach(HoldBackProxy::closeQuietly);
        }
        listener.close();
    }
}
