package io.github.redislock.sample;

import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Downstream storage that takes the lock's fencing token with every write and refuses a token lower
 * than the highest it has accepted: a holder whose lock expired (a long GC pause, say) cannot
 * overwrite the newer holder's data.
 */
@Component
public class FencedLedger {

    private static final RedisScript<Long> WRITE = RedisScript.of(new ClassPathResource("fenced-write.lua"), Long.class);

    private final StringRedisTemplate redis;

    public FencedLedger(StringRedisTemplate redis) {
        this.redis = redis;
    }

    /** Sets the balance if {@code token} is not lower than any accepted before; returns whether it was accepted. */
    public boolean write(String account, long balance, long token) {
        Long accepted = redis.execute(WRITE, List.of("sample:ledger:{" + account + "}"), Long.toString(token),
                Long.toString(balance));
        return accepted != null && accepted == 1;
    }

    public long balance(String account) {
        Object value = redis.opsForHash().get("sample:ledger:{" + account + "}", "balance");
        return value == null ? 0 : Long.parseLong(value.toString());
    }

}
