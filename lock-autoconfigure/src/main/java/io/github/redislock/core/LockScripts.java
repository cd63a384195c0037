package io.github.redislock.core;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/** The Lua scripts, loaded once from {@code io/github/redislock/*.lua}; run with EVALSHA, EVAL on NOSCRIPT. */
final class LockScripts {

    static final RedisScript<Long> ACQUIRE = load("acquire");
    static final RedisScript<Long> RELEASE = load("release");
    static final RedisScript<Long> RENEW = load("renew");
    static final RedisScript<Long> LEAVE = load("leave");

    private LockScripts() {
    }

    private static RedisScript<Long> load(String name) {
        DefaultRedisScript<Long> script = new DefaultRedisScript<>();
        script.setLocation(new ClassPathResource("io/github/redislock/" + name + ".lua"));
        script.setResultType(Long.class);
        script.getSha1(); // reads the resource now, so a missing script fails at start-up
        return script;
    }
}
