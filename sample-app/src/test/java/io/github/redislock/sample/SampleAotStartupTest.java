package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.springframework.aot.AotDetector;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sample app started from the output of {@code spring-boot:process-aot}, as a native image starts it: run by the
 * {@code aot} profile of this module ({@code ./mvnw -Paot -pl sample-app -am verify}), which sets
 * {@code spring.aot.enabled=true}; skipped otherwise.
 */
@EnabledIfSystemProperty(named = "spring.aot.enabled", matches = "true")
class SampleAotStartupTest {

    @Test
    void theContextStartsFromTheAotProcessedDefinitionsAndLocks() throws Exception {
        assertThat(AotDetector.useGeneratedArtifacts()).isTrue();
        assertThat(Class.forName(SampleApplication.class.getName() + "__ApplicationContextInitializer")).isNotNull();
        try (var metadata = getClass().getClassLoader().getResourceAsStream(
                "META-INF/native-image/io.github.redislock/redis-lock-sample/reachability-metadata.json")) {
            assertThat(metadata).as("the native-image metadata process-aot wrote").isNotNull();
            String text = new String(metadata.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).replace("\\/", "/");
            assertThat(text).contains("io/github/redislock/*.lua", "io/github/redislock/lib/*.lua",
                    "io.github.redislock.annotation.LockKeyExpressions$LockKeyRoot");
        }
        try (RedisServerProcess redis = RedisServerProcess.start();
                ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class).main(SampleApplication.class).run(
                        "--server.port=0", "--spring.data.redis.port=" + redis.port(), "--sample.instance-id=aot")) {
            assertThat(context.getBean(RedisLockTemplate.class)).isNotNull();
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://localhost:" + port + "/ledger/aot/deposit?amount=5"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            var deposit = JsonMapper.builder().build().readTree(response.body());
            assertThat(deposit.get("accepted").asBoolean()).isTrue();
            assertThat(deposit.get("fencingToken").asLong()).as("a fencing token from a @DistributedLock method").isPositive();
        }
    }
}
