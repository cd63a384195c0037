package io.github.redislock.core;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Critical sections recorded in a Redis list, {@code {<key>}:sections}, timed by the Redis server's clock so that
 * sections held in different JVMs compare: each entry is {@code <who> <fencing token> <enter µs> <exit µs>
 * <isHeld() at enter> <isHeld() at exit>}.
 */
final class HeldSections {

    /** One recorded section. */
    record Section(String who, long token, long enter, long exit, boolean heldAtEnter, boolean heldAtExit) {

        static Section parse(String entry) {
            String[] words = entry.split(" ");
            return new Section(words[0], Long.parseLong(words[1]), Long.parseLong(words[2]), Long.parseLong(words[3]),
                    Boolean.parseBoolean(words[4]), Boolean.parseBoolean(words[5]));
        }
    }

    private HeldSections() {
    }

    /** Runs {@code inside} holding {@code handle}, and records the section as {@code who}'s. */
    static void hold(StringRedisTemplate redis, String key, String who, LockHandle handle, Runnable inside) {
        boolean heldAtEnter = handle.isHeld();
        long enter = serverMicros(redis);
        inside.run();
        long exit = serverMicros(redis);
        boolean heldAtExit = handle.isHeld();
        redis.opsForList().rightPush(listKey(key), who + " " + handle.fencingToken() + " " + enter + " " + exit + " "
                + heldAtEnter + " " + heldAtExit);
    }

    static List<Section> read(StringRedisTemplate redis, String key) {
        return redis.opsForList().range(listKey(key), 0, -1).stream().map(Section::parse).toList();
    }

    private static String listKey(String key) {
        return "{" + key + "}:sections";
    }

    private static long serverMicros(StringRedisTemplate redis) {
        return redis.execute((RedisCallback<Long>) connection -> connection.serverCommands().time(TimeUnit.MICROSECONDS));
    }
}
