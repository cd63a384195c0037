package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;


import io.github.redislock.test.RedisAcl;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The fair, read/write and semaphore lock contract ({@link LockFamilyContract}) with every lock client logged in as
 * the ACL user docs/security.md documents, with Jedis and with Lettuce; Redis denies none of their commands, keys or
 * channels. (The test's own counters, outside the lock prefix, are written as the default user.)
 */
class LockFamilyAclTest {

    static final String USER = "redis-lock";

    /** Logs {@link LockFamilyContract}'s three lock clients in as the documented user. */
    abstract static class AsTheDocumentedUser extends LockFamilyContract {

        static RedisServerProcess server;
        static RedisClients asUser;

        static void logIn(boolean lettuce) {
            RedisAcl.setUser(server, RedisAcl.documentedSetUser("../docs/security.md", USER, RedisAclTest.PASSWORD));
            server.command("ACL", "LOG", "RESET");
            asUser = new RedisClients(server, USER, RedisAclTest.PASSWORD);
            first = asUser.lockTemplate(client(lettuce));
            second = asUser.lockTemplate(client(lettuce));
            third = asUser.lockTemplate(client(lettuce));
        }

        private static StringRedisTemplate client(boolean lettuce) {
            return lettuce ? asUser.lettuceRedisTemplate() : asUser.redisTemplate();
        }

        @AfterAll
        static void nothingWasDenied() {
            asUser.close(); // unsubscribing is part of what the user must be allowed
            assertThat(RedisAcl.deniedLog(server)).as("commands, keys and channels Redis denied").isEmpty();
        }
    }

    @Nested
    @WithRedis
    class Jedis extends AsTheDocumentedUser {

        @BeforeAll
        static void logInWithJedis() {
            logIn(false);
        }
    }

    @Nested
    @WithRedis
    class Lettuce extends AsTheDocumentedUser {

        @BeforeAll
        static void logInWithLettuce() {
            logIn(true);
        }
    }
}
