package io.github.redislock.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A TCP proxy in front of a test Redis that can stall one connection: once armed with a marker, the first connection
 * whose client sends bytes containing it holds them (and everything it sends after) until {@link #release()}, while
 * every other connection goes on. That is one Redis call stuck on its connection, as a half-open connection or a
 * lost packet leaves it, until the driver's timeout.
 */
final class StallingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int upstreamPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final CountDownLatch stalled = new CountDownLatch(1);
    private volatile byte[] marker;
    private volatile boolean released;
    private volatile boolean closed;

    StallingProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "stalling-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** The next request containing {@code text} stalls its connection. */
    void stallNextRequestContaining(String text) {
        marker = text.getBytes(StandardCharsets.UTF_8);
    }

    /** Waits until a request stalled. */
    boolean awaitStalled(long millis) throws InterruptedException {
        return stalled.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Lets the stalled connection's bytes through. */
    void release() {
        released = true;
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
                pump(client, upstream, true);
                pump(upstream, client, false);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean requests) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            boolean stalling = false;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) != -1) {
                    if (requests && !stalling && matches(buffer, read)) {
                        stalling = true;
                        stalled.countDown();
                    }
                    while (stalling && !released && !closed) {
                        Thread.sleep(5); // hold the bytes: Redis never sees the request, the client hears nothing
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // connection closed or reset
            } finally {
                close(from);
                close(to);
            }
        }, "stalling-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the chunk contains the armed marker; disarms it when so (only one connection stalls). */
    private synchronized boolean matches(byte[] buffer, int length) {
        byte[] text = marker;
        if (text == null) {
            return false;
        }
        for (int i = 0; i + text.length <= length; i++) {
            int j = 0;
            while (j < text.length && buffer[i + j] == text[j]) {
                j++;
            }
            if (j == text.length) {
                marker = null;
                return true;
            }
        }
        return false;
    }

    private void close(Socket socket) {
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
        sockets.forEach(this::close);
    }
}
