package io.github.redislock.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * The shared resource the workers' critical sections read and write, in its own process: a counter
 * over HTTP that timestamps every call on one clock and records the history. In fenced mode it
 * refuses a write whose token is lower than the highest token it has seen.
 * <p>
 * {@code GET /read?worker=&token=}, {@code POST /write?worker=&token=&value=}, {@code POST /event?type=&worker=&token=},
 * {@code POST /mark?name=}, {@code POST /reset?fenced=}, {@code GET /history}, {@code GET /holder},
 * {@code GET /holders}, {@code GET /count} (sections begun), {@code POST /trap?shared=}, {@code GET /trapped}, {@code POST /spring} (catch the next reader
 * inside its section; with {@code shared}, the next shared or the next exclusive one).
 * <p>
 * A read/write lock's reader reads with {@code shared=true} (recorded as {@code shared-read}) and ends its section
 * with {@code /event?type=shared-end}; it writes nothing. Its token counts towards the highest seen, so a fenced
 * resource refuses a write whose token is below a reader's that came before it.
 */
public final class Resource {

    private final List<Event> history = new ArrayList<>();
    private final Map<String, Event> openSections = new HashMap<>();
    private boolean fenced;
    /** Whether the next read is held back (see {@code /trap}); the held read, once one was; what lets it go. */
    private boolean trapArmed;
    /** Which reads the trap catches: {@code null} any, else only shared ({@code true}) or only exclusive ones. */
    private Boolean trapShared;
    private Event trapped;
    private CountDownLatch trapRelease = new CountDownLatch(0);
    private long value;
    private long highestToken;

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        Resource resource = new Resource();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 200);
        server.createContext("/", resource::handle);
        server.setExecutor(Executors.newFixedThreadPool(16));
        server.start();
        System.out.println("resource ready on " + port);
    }

    private void handle(HttpExchange exchange) throws IOException {
        Map<String, String> q = query(exchange.getRequestURI().getRawQuery());
        String path = exchange.getRequestURI().getPath();
        String body;
        CountDownLatch holdReply = null;
        synchronized (this) {
            long now = System.nanoTime();
            String worker = q.getOrDefault("worker", "-");
            long token = Long.parseLong(q.getOrDefault("token", "0"));
            switch (path) {
                case "/read" -> {
                    highestToken = Math.max(highestToken, token);
                    Event read = new Event(now, "true".equals(q.get("shared")) ? "shared-read" : "read", worker, token, value, true);
                    history.add(read);
                    openSections.put(worker, read);
                    body = Long.toString(value);
                    if (trapArmed && (trapShared == null || trapShared == read.type().equals("shared-read"))) {
                        trapArmed = false;
                        trapped = read;
                        holdReply = trapRelease;
                    }
                }
                case "/write" -> {
                    long written = Long.parseLong(q.get("value"));
                    boolean accepted = !fenced || token >= highestToken;
                    if (accepted) {
                        value = written;
                        highestToken = Math.max(highestToken, token);
                    }
                    history.add(new Event(now, "write", worker, token, written, accepted));
                    openSections.remove(worker);
                    body = Boolean.toString(accepted);
                }
                case "/event" -> {
                    history.add(new Event(now, q.get("type"), worker, token, 0, true));
                    if ("abandon".equals(q.get("type")) || "shared-end".equals(q.get("type"))) {
                        openSections.remove(worker);
                    }
                    body = "ok";
                }
                case "/mark" -> {
                    history.add(new Event(now, "mark", q.get("name"), 0, 0, true));
                    body = "ok";
                }
                case "/trap" -> {
                    // hold back the reply to the next read until /spring: its worker is then certainly inside its
                    // critical section (it has read, it cannot have written), so it can be stopped there
                    trapRelease.countDown();
                    trapRelease = new CountDownLatch(1);
                    trapArmed = true;
                    trapShared = q.containsKey("shared") ? Boolean.valueOf(q.get("shared")) : null;
                    trapped = null;
                    body = "ok";
                }
                case "/trapped" -> body = trapped == null ? "" : trapped.worker() + " " + trapped.token();
                case "/spring" -> {
                    trapArmed = false;
                    trapRelease.countDown();
                    body = "ok";
                }
                case "/reset" -> {
                    trapArmed = false;
                    trapped = null;
                    trapRelease.countDown();
                    history.clear();
                    openSections.clear();
                    value = 0;
                    highestToken = 0;
                    fenced = Boolean.parseBoolean(q.get("fenced"));
                    body = "ok";
                }
                case "/holder" -> {
                    // the worker whose critical section started last and has not ended
                    body = openSections.values().stream().max(java.util.Comparator.comparingLong(Event::nanos))
                            .map(e -> e.worker() + " " + e.token()).orElse("");
                }
                case "/count" -> // sections begun so far
                    body = Long.toString(history.stream().filter(e -> e.type().endsWith("read")).count());
                case "/holders" -> {
                    // every worker thread inside a section now, one a line
                    StringBuilder sb = new StringBuilder();
                    openSections.keySet().forEach(w -> sb.append(w).append('\n'));
                    body = sb.toString();
                }
                case "/history" -> {
                    StringBuilder sb = new StringBuilder();
                    history.forEach(e -> sb.append(e.line()).append('\n'));
                    sb.append("value ").append(value).append('\n');
                    body = sb.toString();
                }
                default -> body = "unknown " + path;
            }
        }
        if (holdReply != null) {
            try {
                holdReply.await(30, TimeUnit.SECONDS); // the controller lets it go within milliseconds
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> map = new HashMap<>();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    map.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
        }
        return map;
    }
}
