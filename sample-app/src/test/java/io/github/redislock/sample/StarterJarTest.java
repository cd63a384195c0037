package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

import io.github.redislock.autoconfigure.RedisLockProperties;
import io.github.redislock.core.RedisLockTemplate;
import org.junit.jupiter.api.Test;

/** What a user's build gets from the starter: the auto-configuration and engine jars, as Maven packaged them. */
class StarterJarTest {

    @Test
    void theAutoConfigurationJarCarriesIdeMetadataAndItsRegistration() throws Exception {
        Path artifact = Path.of(RedisLockProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(artifact.getFileName().toString()).as("the sample app is built against the packaged jar").endsWith(".jar");
        try (JarFile jar = new JarFile(artifact.toFile())) {
            ZipEntry metadata = jar.getEntry("META-INF/spring-configuration-metadata.json");
            assertThat(metadata).as("IDE metadata in " + artifact).isNotNull();
            String json = new String(jar.getInputStream(metadata).readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"redis-lock.wait-time\"", "\"redis-lock.lease-time\"", "\"redis-lock.key-prefix\"",
                    "\"redis-lock.advisor-order\"", "\"redis-lock.enabled\"", "\"redis-lock.allow-bean-references\"");
            assertThat(jar.getEntry("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports"))
                    .isNotNull();
        }
        Path core = Path.of(RedisLockTemplate.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(core.getFileName().toString()).as("the engine's own packaged jar").startsWith("redis-lock-core-")
                .endsWith(".jar");
        try (JarFile jar = new JarFile(core.toFile())) {
            assertThat(jar.getEntry("io/github/redislock/acquire.lua")).as("the Lua scripts in " + core).isNotNull();
        }
    }
}
