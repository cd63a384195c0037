package io.github.redislock.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy between the workers and Redis that can add latency, blackhole traffic (stop forwarding
 * while keeping connections open) and reset every connection. Made with {@code delayable} true, it can also hold
 * back what Redis sends to the clients, each byte by the same delay ({@link #delayReplies}), without slowing what
 * the clients send: a pub/sub connection then receives its messages late, in order, one delay after Redis sent them.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int upstreamPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long latencyMillis;
    private volatile boolean blackhole;
    private volatile boolean closed;
    private final boolean delayable;
    private volatile long replyDelayMillis;

    public TcpProxy(int upstreamPort) throws IOException {
        this(upstreamPort, false);
    }

    /** @param delayable whether {@link #delayReplies} may be used (each connection then gets a thread more) */
    public TcpProxy(int upstreamPort, boolean delayable) throws IOException {
        this.upstreamPort = upstreamPort;
        this.delayable = delayable;
        this.server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public void latency(long millis) {
        this.latencyMillis = millis;
    }

    /**
     * Holds back every byte Redis sends to a client by {@code millis} from when the proxy received it (0: no
     * longer); bytes already held back keep their time. Only for a proxy made {@code delayable}.
     */
    public void delayReplies(long millis) {
        if (!delayable) {
            throw new IllegalStateException("this proxy was not made delayable");
        }
        this.replyDelayMillis = millis;
    }

    public void blackhole(boolean on) {
        this.blackhole = on;
    }

    /** Closes every connection with a TCP reset; clients reconnect through the proxy. */
    public void resetConnections() {
        for (Socket socket : sockets) {
            try {
                socket.setSoLinger(true, 0);
                socket.close();
            } catch (IOException ignored) {
                // already gone
            }
        }
        sockets.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress("127.0.0.1", upstreamPort), 1000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                if (delayable) {
                    delayedPump(upstream, client);
                } else {
                    pump(upstream, client);
                }
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) != -1) {
                    while (blackhole && !closed) {
                        Thread.sleep(5); // hold the bytes: the peer sees silence, not an error
                    }
                    long delay = latencyMillis;
                    if (delay > 0) {
                        Thread.sleep(delay);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // connection closed or reset
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /** Like {@link #pump}, but each chunk is written {@link #replyDelayMillis} after it was read, in order. */
    private void delayedPump(Socket from, Socket to) {
        java.util.concurrent.BlockingQueue<Object[]> chunks = new java.util.concurrent.LinkedBlockingQueue<>();
        Object end = new Object();
        Thread writer = new Thread(() -> {
            try (OutputStream out = to.getOutputStream()) {
                for (Object[] chunk = chunks.take(); chunk[0] != end; chunk = chunks.take()) {
                    long wait = (long) chunk[1] - System.nanoTime();
                    if (wait > 0) {
                        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    byte[] bytes = (byte[]) chunk[0];
                    out.write(bytes);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // connection closed or reset
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-delayed-writer");
        writer.setDaemon(true);
        writer.start();
        Thread reader = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                int read;
                while ((read = in.read(buffer)) != -1) {
                    long due = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(replyDelayMillis);
                    chunks.add(new Object[] {java.util.Arrays.copyOf(buffer, read), due});
                }
            } catch (IOException e) {
                // connection closed or reset
            } finally {
                chunks.add(new Object[] {end, 0L}); // what was read still goes out, then the connection closes
            }
        }, "proxy-delayed-reader");
        reader.setDaemon(true);
        reader.start();
    }

    private void closeQuietly(Socket socket) {
        sockets.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        resetConnections();
    }
}
