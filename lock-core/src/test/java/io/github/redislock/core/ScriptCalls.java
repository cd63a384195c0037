package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Script calls a test Redis ran, from {@code INFO commandstats}: to tell when a request held back on its way (a proxy)
 * has reached Redis.
 */
final class ScriptCalls {

    private ScriptCalls() {
    }

    /** {@code EVAL} and {@code EVALSHA} calls so far, those that failed included (each line's {@code calls=}). */
    static long ran(RedisServerProcess server) {
        long calls = 0;
        for (String line : server.command("INFO", "commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                calls += Long.parseLong(line.replaceAll("^cmdstat_[a-z]+:calls=(\\d+),.*", "$1"));
            }
        }
        return calls;
    }

    /** Waits up to 10 s until {@code server} ran more script calls than {@code calls}. */
    static void awaitAbove(RedisServerProcess server, long calls, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ran(server) <= calls) {
            assertThat(System.nanoTime()).as(what).isLessThan(end);
            Thread.sleep(5);
        }
    }

    /**
     * Loads {@code script} into {@code server}, so a call of it held back on its way runs when it lands: a driver sends
     * the script's text only after Redis refused its SHA as unknown (NOSCRIPT), which a held-back connection never hears.
     */
    static void load(RedisServerProcess server, RedisScript<?> script) {
        assertThat(server.command("SCRIPT", "LOAD", script.getScriptAsString())).isEqualTo(script.getSha1());
    }
}
