package io.github.redislock.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** @WithRedisServer on a plain JUnit test: fields and parameters get the shared server. */
@WithRedisServer
class RedisServerExtensionTest {

    static TestRedisServer beforeAll;
    TestRedisServer field;

    @BeforeAll
    static void serverIsSetBeforeAll() {
        assertThat(beforeAll).isNotNull();
    }

    @Test
    void fieldsAndParametersGetTheSharedServer(TestRedisServer parameter) {
        assertThat(field).isSameAs(parameter).isSameAs(beforeAll).isSameAs(TestRedisServer.shared());
        assertThat(parameter.command("PING")).isEqualTo("PONG");
        assertThat(parameter.port()).isNotEqualTo(6379);
    }
}
