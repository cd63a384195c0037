package io.github.redislock.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Redis ACL users for tests: created with {@code ACL SETUSER} through the server's default (unrestricted) user, the
 * documented line read from the docs, and what Redis denied ({@code ACL LOG}).
 */
public final class RedisAcl {

    /** The password placeholder of the documented line. */
    public static final String PASSWORD_PLACEHOLDER = ">CHANGE-ME";

    private RedisAcl() {
    }

    /** Runs {@code setUser}, a whole {@code ACL SETUSER name rule...} line, on {@code server}; the same line replaces the user's rules. */
    public static void setUser(RedisServerProcess server, String setUser) {
        String[] words = setUser.trim().split("\\s+");
        if (words.length < 3 || !words[0].equalsIgnoreCase("ACL") || !words[1].equalsIgnoreCase("SETUSER")) {
            throw new IllegalArgumentException("not an ACL SETUSER line: " + setUser);
        }
        server.command("ACL", "SETUSER", words[2], "reset");
        server.command(words);
    }

    /**
     * The {@code ACL SETUSER user ...} line of the Markdown page {@code page} (the first line that starts so), with its
     * password placeholder ({@value #PASSWORD_PLACEHOLDER}) replaced by {@code password}.
     */
    public static String documentedSetUser(String page, String user, String password) {
        try {
            String prefix = "ACL SETUSER " + user + " ";
            return Files.readAllLines(Path.of(page)).stream().map(String::trim).filter(line -> line.startsWith(prefix))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException(page + " has no line starting with '" + prefix + "'"))
                    .replace(PASSWORD_PLACEHOLDER, ">" + password);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The documented line with {@code rules} taken out of it (words such as {@code +evalsha} or {@code &redis-lock:*}). */
    public static String without(String setUser, String... rules) {
        List<String> removed = Arrays.asList(rules);
        List<String> words = Arrays.stream(setUser.trim().split("\\s+")).filter(word -> !removed.contains(word)).toList();
        if (words.size() != setUser.trim().split("\\s+").length - rules.length) {
            throw new IllegalArgumentException("not every one of " + removed + " is in " + setUser);
        }
        return String.join(" ", words);
    }

    /**
     * What Redis denied since the last {@code ACL LOG RESET}: one line per entry, as {@code reason object by username}
     * ({@code command wait by redis-lock}, {@code channel redis-lock:wake:x by redis-lock}); empty when nothing was.
     * On Redis 6 it leaves out {@code command client}: Jedis and Lettuce send {@code CLIENT SETINFO} (Redis 7.2) when
     * they connect and ignore its refusal, which Redis 7.0 answers as an unknown subcommand without logging, while 6.2
     * checks the user's rights to {@code CLIENT} first and logs the denial (docs/security.md says so).
     */
    public static List<String> deniedLog(RedisServerProcess server) {
        List<String> entries = loggedDenials(server);
        if (server.majorVersion() < 7) {
            entries.removeIf(entry -> entry.startsWith("command client by "));
        }
        return entries;
    }

    private static List<String> loggedDenials(RedisServerProcess server) {
        String log = server.command("ACL", "LOG");
        if (log == null || log.isEmpty()) {
            return new java.util.ArrayList<>();
        }
        // each entry is flattened into field/value lines: pick reason, object and username of each
        List<String> lines = Arrays.asList(log.split("\n"));
        List<String> entries = new java.util.ArrayList<>();
        String reason = null;
        String object = null;
        for (int i = 0; i + 1 < lines.size(); i++) {
            switch (lines.get(i)) {
                case "reason" -> reason = lines.get(++i);
                case "object" -> object = lines.get(++i);
                case "username" -> entries.add(reason + " " + object + " by " + lines.get(++i));
                default -> {
                }
            }
        }
        return entries;
    }
}
