package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.Arrays;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

class RedisLockRuntimeHintsTest {

    private final RuntimeHints hints = new RuntimeHints();

    RedisLockRuntimeHintsTest() {
        new RedisLockRuntimeHints().registerHints(hints, getClass().getClassLoader());
    }

    @Test
    void everyLuaScriptAndItsLibraryIsIncludedAsAResource() throws IOException {
        Resource[] scripts = new PathMatchingResourcePatternResolver().getResources("classpath*:io/github/redislock/**/*.lua");
        assertThat(scripts).extracting(Resource::getFilename).contains("acquire.lua", "release.lua", "fence.lua");
        for (Resource script : scripts) {
            String path = script.getURL().toString().replaceFirst(".*/(io/github/redislock/.*)$", "$1");
            assertThat(RuntimeHintsPredicates.resource().forResource(path)).as(path).accepts(hints);
        }
    }

    @Test
    void theAnnotationAttributesTheAdvisorReadsAreReflectable() {
        for (Class<?> annotation : new Class<?>[] {DistributedLock.class, FencingToken.class}) {
            for (Method attribute : annotation.getDeclaredMethods()) {
                assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(attribute)).as(attribute.toString()).accepts(hints);
            }
            assertThat(RuntimeHintsPredicates.proxies().forInterfaces(annotation)).accepts(hints);
        }
    }

    @Test
    void theKeyExpressionRootsGettersAreReflectable() throws ClassNotFoundException {
        Class<?> root = Class.forName(RedisLockRuntimeHints.LOCK_KEY_ROOT);
        assertThat(Arrays.stream(root.getMethods()).filter(m -> m.getName().startsWith("get") && m.getDeclaringClass() == root))
                .hasSizeGreaterThanOrEqualTo(5)
                .allSatisfy(getter -> assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(getter)).accepts(hints));
    }

    @Test
    void theVirtualThreadLookupOfAsyncLocksIsReflectable() {
        // by name: the build's JDK 17 has no Thread.ofVirtual() to hand a predicate
        assertThat(hints.reflection().getTypeHint(Thread.class).methods()).anySatisfy(method -> {
            assertThat(method.getName()).isEqualTo("ofVirtual");
            assertThat(method.getMode()).isEqualTo(org.springframework.aot.hint.ExecutableMode.INVOKE);
        });
        assertThat(hints.reflection().getTypeHint(org.springframework.aot.hint.TypeReference.of("java.lang.Thread$Builder"))
                .methods()).extracting(org.springframework.aot.hint.ExecutableHint::getName).contains("name", "factory");
    }

    @Test
    void theAutoConfigurationImportsTheHints() {
        assertThat(RedisLockAutoConfiguration.class.getAnnotation(ImportRuntimeHints.class).value())
                .containsExactly(RedisLockRuntimeHints.class);
    }
}
