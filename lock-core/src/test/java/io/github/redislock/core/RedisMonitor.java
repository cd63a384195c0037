package io.github.redislock.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Every command a test redis-server runs, as Redis's MONITOR reports it (one line per command, in the order Redis ran
 * them: {@code <time> [<db> <client>] "evalsha" "<sha>" "1" "<key>" ...}), collected on a thread of its own. For
 * counting what a lock sent; commands that scripts run inside Redis are reported too, tagged {@code [0 lua]}.
 */
final class RedisMonitor implements AutoCloseable {

    private final Socket socket;
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;

    RedisMonitor(RedisServerProcess server) throws IOException, InterruptedException {
        socket = new Socket();
        socket.connect(new InetSocketAddress(server.host(), server.port()), 2000);
        OutputStream out = socket.getOutputStream();
        out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        String ok = in.readLine();
        if (!"+OK".equals(ok)) {
            throw new IOException("MONITOR answered " + ok);
        }
        reader = new Thread(() -> read(in), "redis-monitor");
        reader.setDaemon(true);
        reader.start();
    }

    private void read(BufferedReader in) {
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                synchronized (this) {
                    lines.add(line);
                    notifyAll();
                }
            }
        } catch (IOException closed) {
            // the test closed the monitor
        }
    }

    /** The lines seen so far that match, in Redis's order. */
    synchronized List<String> lines(Predicate<String> matching) {
        return lines.stream().filter(matching).toList();
    }

    /** How many lines seen so far match. */
    synchronized int count(Predicate<String> matching) {
        return (int) lines.stream().filter(matching).count();
    }

    /** How many lines match after the last line that matches {@code after} (all of them if none does). */
    synchronized int countAfterLast(Predicate<String> after, Predicate<String> matching) {
        int start = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (after.test(lines.get(i))) {
                start = i + 1;
            }
        }
        return (int) lines.subList(start, lines.size()).stream().filter(matching).count();
    }

    /** Waits until at least {@code count} lines match; fails naming {@code what} if they do not within {@code timeout}. */
    synchronized void awaitCount(Predicate<String> matching, int count, Duration timeout, String what)
            throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (count(matching) < count) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("Redis ran " + count(matching) + " " + what + " within " + timeout
                        + ", expected at least " + count);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /**
     * The owner id of the first hand-over in Redis ({@code <client>:handover:<n>}) in a command on {@code redisKey}: what
     * a release handed the lock over to, before the next thread took it. Waits up to 5 s for the monitor to read it.
     */
    String handedOverOwner(String redisKey) throws InterruptedException {
        Pattern owner = Pattern.compile("\"([^\"]*:handover:\\d+)\"");
        Predicate<String> handOver = line -> line.contains(redisKey) && owner.matcher(line).find();
        awaitCount(handOver, 1, Duration.ofSeconds(5), "hand-overs of " + redisKey);
        Matcher found = owner.matcher(lines(handOver).get(0));
        found.find();
        return found.group(1);
    }

    /** A MONITOR line of an EVALSHA of {@code script} whose arguments include every one of {@code args}, quoted. */
    static Predicate<String> evalsha(RedisScript<?> script, String... args) {
        String sha = "\"" + script.getSha1() + "\"";
        return line -> {
            if (!line.contains(sha)) {
                return false;
            }
            for (String arg : args) {
                if (!line.contains("\"" + arg + "\"")) {
                    return false;
                }
            }
            return true;
        };
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
