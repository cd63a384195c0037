package io.github.redislock.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A real {@code redis-server} process on a free loopback port, for tests and benchmarks.
 * <p>
 * Uses the {@code redis-server} binary on the PATH, else the Linux/macOS binary shipped inside
 * {@code com.github.codemonstur:embedded-redis} (Redis 6.2); the system property {@value #BINARY_PROPERTY} picks one:
 * {@code embedded} for that Redis 6.2 even when another is on the PATH (lock-core's {@code redis-6.2} tests), or a
 * path. It never binds, uses or flushes port 6379: that
 * Redis belongs to the machine. The process can be stopped, killed with SIGKILL, paused with
 * SIGSTOP and restarted on the same port, which is what the fault tests need.
 */
public final class RedisServerProcess implements AutoCloseable {

    /**
     * The system property naming the {@code redis-server} binary: {@code embedded} (the Redis 6.2 inside
     * embedded-redis) or a path; unset, the one on the PATH, else the embedded one.
     */
    public static final String BINARY_PROPERTY = "redislock.test.redis-server";

    /** Redis Cluster binds its bus on the port plus this. */
    private static final int BUS_OFFSET = 10000;
    /**
     * Ports are drawn from [11000, 21000), their bus ports so from [21000, 31000): no server's port is another's
     * bus port, and both stay below the ephemeral range.
     */
    private static final int FIRST_PORT = 11000;
    private static final int PORT_SPAN = BUS_OFFSET;

    /** Servers still running when the JVM exits (a test run stopped with Ctrl-C, say) are killed with it. */
    private static final java.util.Set<Process> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "redis-server-cleanup"));
    }

    private final int port;
    private final Path dir;
    private final List<String> extraArgs;
    private Process process;

    private RedisServerProcess(int port, Path dir, List<String> extraArgs) {
        this.port = port;
        this.dir = dir;
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** Starts a Redis that keeps nothing on disk. */
    public static RedisServerProcess start() {
        return start(List.of());
    }

    /** Starts a Redis with extra command-line options, e.g. {@code "--appendonly", "yes"}. */
    public static RedisServerProcess start(List<String> extraArgs) {
        RedisServerProcess server = create(extraArgs);
        server.startProcess();
        return server;
    }

    /** Creates a server on a free port without starting it; {@link #restart()} starts it. */
    public static RedisServerProcess create(List<String> extraArgs) {
        try {
            Path dir = Files.createTempDirectory("redis-lock-test-");
            return new RedisServerProcess(freePort(), dir, extraArgs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    public String host() {
        return "127.0.0.1";
    }

    /** The directory the server runs in (its AOF/RDB files and configuration). */
    public Path dir() {
        return dir;
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    /** Stops the server gracefully (SHUTDOWN NOSAVE unless it persists with AOF). */
    public synchronized void stop() {
        if (!isRunning()) {
            return;
        }
        try {
            command("SHUTDOWN");
        } catch (RuntimeException ignored) {
            // the connection is closed by the shutdown itself
        }
        waitForExit(Duration.ofSeconds(10));
    }

    /** Kills the server with SIGKILL: no shutdown, no save. */
    public synchronized void kill() {
        if (!isRunning()) {
            return;
        }
        process.destroyForcibly();
        waitForExit(Duration.ofSeconds(10));
    }

    /** Pauses the server with SIGSTOP: connections stay open but nothing is answered. */
    public void pause() {
        signal("STOP");
    }

    /** Resumes a paused server with SIGCONT. */
    public void resume() {
        signal("CONT");
    }

    /** Starts the server again on the same port and directory (stopping it first if it runs). */
    public synchronized void restart() {
        if (isRunning()) {
            stop();
        }
        startProcess();
    }

    /**
     * Sends one command over a fresh connection and returns the reply as text (integers and
     * bulk strings as their value, arrays as lines). For test assertions, not for speed.
     */
    public String command(String... args) {
        return command(host(), port, args);
    }

    /** Sends one command to any Redis (or Sentinel) on {@code host:port}; see {@link #command(String...)}. */
    public static String command(String host, int port, String... args) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 2000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                request.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
            }
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return readReply(socket.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException("Redis on port " + port + " did not answer " + args[0], e);
        }
    }

    @Override
    public synchronized void close() {
        kill();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp directory left behind is harmless
        }
    }

    private void startProcess() {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary().toString());
        cmd.addAll(List.of("--port", String.valueOf(port), "--bind", "127.0.0.1", "--dir", dir.toString(),
                "--save", "", "--daemonize", "no", "--protected-mode", "no", "--logfile", "redis.log"));
        if (!extraArgs.contains("--appendonly")) {
            cmd.addAll(List.of("--appendonly", "no"));
        }
        cmd.addAll(extraArgs);
        try {
            process = new ProcessBuilder(cmd).directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("stdout.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + cmd, e);
        }
        RUNNING.add(process);
        process.onExit().thenRun(() -> RUNNING.remove(process));
        awaitReady();
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server on port " + port + " exited: " + log());
            }
            try {
                String reply = command("PING");
                if ("PONG".equals(reply)) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            sleep(20);
        }
        throw new IllegalStateException("redis-server on port " + port + " did not start: " + log(), last);
    }

    private String log() {
        try {
            Path log = dir.resolve("redis.log");
            return Files.exists(log) ? Files.readString(log) : Files.readString(dir.resolve("stdout.log"));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    private void waitForExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void signal(String signal) {
        try {
            new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String readReply(InputStream in) throws IOException {
        String line = readLine(in);
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+':
            case ':':
                return rest;
            case '-':
                throw new IllegalStateException("Redis error: " + rest);
            case '$': {
                int len = Integer.parseInt(rest);
                if (len < 0) {
                    return null;
                }
                byte[] data = in.readNBytes(len + 2);
                return new String(data, 0, len, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(rest);
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    if (i > 0) {
                        sb.append('\n');
                    }
                    sb.append(readReply(in));
                }
                return sb.toString();
            }
            default:
                throw new IllegalStateException("unexpected Redis reply: " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\r') {
                in.read();
                break;
            }
            sb.append((char) c);
        }
        if (c == -1 && sb.length() == 0) {
            throw new IOException("connection closed");
        }
        return sb.toString();
    }

    /**
     * A loopback port that is free, and whose cluster bus port (port + 10000) is free too. Both are drawn below
     * the kernel's ephemeral range (32768 and up on Linux), so an outgoing connection of any process cannot
     * take either of them between this check and the server's bind; the machine's Redis (6379) is below them.
     */
    public static int freePort() {
        // test JVMs that run side by side (surefire forks) draw from disjoint slices of the span, so that two of
        // them never pick the same free port at once
        int forks = Integer.getInteger("redislock.test.forks", 1);
        int fork = Math.floorMod(Integer.getInteger("redislock.test.fork", 1) - 1, Math.max(forks, 1));
        int slice = PORT_SPAN / Math.max(forks, 1);
        int first = FIRST_PORT + fork * slice;
        for (int i = 0; i < 1000; i++) {
            int port = ThreadLocalRandom.current().nextInt(first, first + slice);
            if (isFree(port) && isFree(port + BUS_OFFSET)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port between " + FIRST_PORT + " and " + (FIRST_PORT + PORT_SPAN)
                + " whose port + " + BUS_OFFSET + " is free too");
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static Path binaryPath;

    /**
     * The redis-server binary: the one {@value #BINARY_PROPERTY} names, else the one on the PATH, else the one
     * extracted from embedded-redis.
     */
    public static synchronized Path binary() {
        if (binaryPath != null) {
            return binaryPath;
        }
        String chosen = System.getProperty(BINARY_PROPERTY, "");
        if (chosen.equals("embedded")) {
            return binaryPath = extractEmbeddedBinary();
        }
        if (!chosen.isEmpty()) {
            if (!Files.isExecutable(Path.of(chosen))) {
                throw new IllegalStateException(BINARY_PROPERTY + "=" + chosen + " is not an executable file");
            }
            return binaryPath = Path.of(chosen);
        }
        Path onPath = onPath("redis-server");
        return binaryPath = onPath != null ? onPath : extractEmbeddedBinary();
    }

    /** The executable {@code name} in a directory of the PATH, or {@code null}. */
    static @Nullable Path onPath(String name) {
        for (String entry : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(entry, name);
            if (!entry.isEmpty() && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** The server's major version (6 for Redis 6.2.11), from {@code INFO server}. */
    public int majorVersion() {
        for (String line : command("INFO", "server").split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return Integer.parseInt(line.substring("redis_version:".length()).split("\\.")[0]);
            }
        }
        throw new IllegalStateException("INFO server on port " + port + " names no redis_version");
    }

    private static Path extractEmbeddedBinary() {
        String os = System.getProperty("os.name").toLowerCase();
        String arch = System.getProperty("os.arch");
        String resource;
        if (os.contains("linux")) {
            resource = arch.contains("aarch64") || arch.contains("arm") ? "redis-server-6.2.7-linux-arm64"
                    : "redis-server-6.2.6-v5-linux-amd64";
        } else if (os.contains("mac")) {
            resource = arch.contains("aarch64") ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
        } else {
            throw new IllegalStateException("no redis-server on PATH and no embedded binary for " + os + "/" + arch);
        }
        try (InputStream in = RedisServerProcess.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("no redis-server on PATH and " + resource + " is not on the classpath");
            }
            Path target = Files.createTempFile("redis-server-", "");
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
            target.toFile().deleteOnExit();
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
