package io.github.redislock.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.StreamUtils;

/**
 * The Lua scripts, read once from {@code io/github/redislock/*.lua}; run with EVALSHA, EVAL on NOSCRIPT.
 * <p>
 * Each script's text is read into memory at start-up rather than handed over as a resource: a
 * resource-backed {@code DefaultRedisScript} checks the file's modification time on every call, which
 * costs more than the script itself.
 */
final class LockScripts {

    static final RedisScript<Long> ACQUIRE = load("acquire");
    static final RedisScript<Long> RELEASE = load("release");
    static final RedisScript<Long> RENEW = load("renew");
    static final RedisScript<Long> LEAVE = load("leave");

    private LockScripts() {
    }

    private static RedisScript<Long> load(String name) {
        ClassPathResource resource = new ClassPathResource("io/github/redislock/" + name + ".lua");
        try {
            return RedisScript.of(StreamUtils.copyToString(resource.getInputStream(), StandardCharsets.UTF_8), Long.class);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read the lock script " + resource.getPath(), e);
        }
    }
}
