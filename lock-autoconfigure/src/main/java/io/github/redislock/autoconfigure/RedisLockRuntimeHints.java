package io.github.redislock.autoconfigure;

import java.util.List;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.FencingToken;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What a native image or an AOT-processed application needs beyond what Spring infers: the Lua scripts (read from
 * the classpath once), the annotation attributes the advisor reads, {@code #root} of key expressions (read by SpEL
 * reflectively), and the virtual-thread factory the holder threads of asynchronous locks are looked up with. Types
 * of method arguments that key expressions read are the application's own and need its own hints
 * ({@code @RegisterReflectionForBinding}).
 */
class RedisLockRuntimeHints implements RuntimeHintsRegistrar {

    /** {@code #root} of a key expression: its getters are what {@code #root.methodName} and the like call. */
    static final String LOCK_KEY_ROOT = "io.github.redislock.annotation.LockKeyExpressions$LockKeyRoot";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern("io/github/redislock/*.lua");
        hints.resources().registerPattern("io/github/redislock/lib/*.lua");
        for (Class<?> annotation : List.of(DistributedLock.class, FencingToken.class)) {
            hints.reflection().registerType(annotation, MemberCategory.INVOKE_PUBLIC_METHODS);
            hints.proxies().registerJdkProxy(annotation); // synthesized when read through a meta-annotation with @AliasFor
        }
        hints.reflection().registerType(TypeReference.of(LOCK_KEY_ROOT), MemberCategory.INVOKE_PUBLIC_METHODS,
                MemberCategory.ACCESS_DECLARED_FIELDS);
        hints.reflection().registerType(Thread.class, type -> type.withMethod("ofVirtual", List.of(), ExecutableMode.INVOKE));
        hints.reflection().registerType(TypeReference.of("java.lang.Thread$Builder"), type -> type
                .withMethod("name", List.of(TypeReference.of(String.class), TypeReference.of(long.class)), ExecutableMode.INVOKE)
                .withMethod("factory", List.of(), ExecutableMode.INVOKE));
        hints.reflection().registerType(TypeReference.of("java.lang.ThreadBuilders$VirtualThreadBuilder"),
                MemberCategory.INVOKE_PUBLIC_METHODS);
    }
}
