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

/**
 * A TCP proxy in front of a test Redis whose forwarding, both ways, the test can hold back and let through again: what
 * is sent while it is held back is kept, in order, and delivered when it is let through, as a stalled network path
 * would deliver it. Used for one client's connections only (say a lock client's pub/sub connection), so one of its
 * connections can lag behind the others.
 */
final class HoldBackProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final List<Socket> sockets = new ArrayList<>();
    private boolean heldBack;
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

    String host() {
        return listener.getInetAddress().getHostAddress();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** From now on nothing is forwarded, either way, until {@link #letThrough()}. */
    synchronized void holdBack() {
        heldBack = true;
    }

    /** Forwards what was held back, and everything after it. */
    synchronized void letThrough() {
        heldBack = false;
        notifyAll();
    }

    private synchronized void awaitLetThrough() throws InterruptedException {
        while (heldBack && !closed) {
            wait();
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
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                    awaitLetThrough();
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
