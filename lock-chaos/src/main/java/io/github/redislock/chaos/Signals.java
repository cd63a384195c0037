package io.github.redislock.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * Sends POSIX signals through one long-lived shell, with its built-in {@code kill}. Java has no API
 * for SIGSTOP/SIGCONT, and starting a {@code kill} process for each signal can take longer than a
 * whole critical section on a slow machine, so the pause would land after the section it aimed at.
 */
final class Signals implements AutoCloseable {

    private final Process shell;
    private final Writer commands;
    private final BufferedReader replies;

    Signals() throws IOException {
        shell = new ProcessBuilder("bash", "--noprofile", "--norc").redirectErrorStream(true).start();
        commands = new java.io.OutputStreamWriter(shell.getOutputStream(), StandardCharsets.UTF_8);
        replies = new BufferedReader(new InputStreamReader(shell.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Sends {@code signal} (e.g. {@code STOP}) to {@code pid} and returns once it was sent. */
    synchronized void send(long pid, String signal) throws IOException {
        commands.write("kill -" + signal + " " + pid + " 2>/dev/null; echo sent\n");
        commands.flush();
        String reply = replies.readLine();
        if (!"sent".equals(reply)) {
            throw new IOException("the signal shell answered " + reply + " to kill -" + signal + " " + pid);
        }
    }

    @Override
    public void close() {
        shell.destroyForcibly();
    }
}
