package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** A key's text is its value's content, the same on every call and in every JVM, or the key is refused. */
class DistributedLockOperationTest {

    private final LockKeyExpressions expressions = new LockKeyExpressions(null);

    /** No text of its own, and no subclass can give it one. */
    static final class Opaque {
    }

    /** No text of its own, but a subclass may have one. */
    static class OpenOpaque {
    }

    interface Named {
    }

    record Sku(String code) {
    }

    enum Region {
        EU
    }

    static class Catalogue {

        public static final String REGION = "eu";

        static final AtomicInteger secretReads = new AtomicInteger();

        public static String getSecret() {
            secretReads.incrementAndGet();
            return "s3cret";
        }

        @DistributedLock(key = "#value")
        public void byValue(Object value) {
        }

        @DistributedLock(key = "#ids")
        public void byIds(long[] ids) {
        }

        @DistributedLock(key = "#opaque")
        public void byOpaque(Opaque opaque) {
        }

        @DistributedLock(key = "#p0")
        public void byOpaqueAtP0(Opaque opaque) {
        }

        @DistributedLock(key = "#a0")
        public void byOpaqueAtA0(Opaque opaque) {
        }

        @DistributedLock(key = "#all")
        public void byOpaques(Opaque[][] all) {
        }

        @DistributedLock(key = "#open")
        public void byOpen(OpenOpaque open) {
        }

        @DistributedLock(key = "#named")
        public void byNamed(Named named) {
        }

        @DistributedLock(key = "#items")
        public void byItems(List<Opaque> items) {
        }

        @DistributedLock(key = "'at:' + #opaque")
        public void byOpaqueInText(Opaque opaque) {
        }

        @DistributedLock(key = "'ids:' + #ids")
        public void byIdsInText(long[] ids) {
        }

        @DistributedLock(key = "#root.target")
        public void byTarget() {
        }

        @DistributedLock(key = "#root.targetClass.secret")
        public void byStaticGetter() {
        }

        @DistributedLock(key = "#root.targetClass.REGION")
        public void byStaticField() {
        }

        @DistributedLock(key = "#root.targetClass + '/' + #root.className")
        public void byTargetClass() {
        }
    }

    private static Method method(String name) {
        return Arrays.stream(Catalogue.class.getMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    private DistributedLockOperation resolve(String methodName) {
        Method method = method(methodName);
        DistributedLock lock = method.getAnnotation(DistributedLock.class);
        return new DistributedLockOperationParser(expressions).parse(method, Catalogue.class, lock, lock.waitTime(), lock.leaseTime());
    }

    private String key(String methodName, Object... args) {
        Set<String> keys = new LockKeyResolver(expressions).keys(resolve(methodName), args, Catalogue.class);
        assertThat(keys).hasSize(1);
        return keys.iterator().next();
    }

    @Test
    void aKeyRenderedFromAnArrayLocksByContent() {
        assertThat(key("byIds", (Object) new long[] {1, 2, 3})).isEqualTo("[1, 2, 3]")
                .isEqualTo(key("byIds", (Object) new long[] {1, 2, 3}));
        assertThat(key("byValue", (Object) new int[][] {{1, 2}, {3}})).isEqualTo("[[1, 2], [3]]");
        assertThat(key("byValue", (Object) new char[] {'a', 'b'})).isEqualTo("[a, b]");
        assertThat(key("byValue", new Sku("x"))).as("a record keeps its own text").isEqualTo("Sku[code=x]");
        assertThat(key("byValue", 42L)).isEqualTo("42");
        assertThat(key("byValue", (Object) new Object[] {"a", 1, Region.EU, new Sku("x"), null, new boolean[] {true}}))
                .isEqualTo("[a, 1, EU, Sku[code=x], null, [true]]");
    }

    @Test
    void aKeyRenderedFromACollectionOrMapLocksByContentWhateverItsOrder() {
        assertThat(key("byValue", List.of(3, 1, 2))).isEqualTo("[3, 1, 2]");
        // 1 and 17 share a bucket of a 16-slot table but not of a 1024-slot one, so the two iterate differently
        Set<Integer> small = new HashSet<>(16);
        Set<Integer> large = new HashSet<>(1024);
        for (int i : new int[] {17, 2, 1}) {
            small.add(i);
            large.add(i);
        }
        assertThat(List.copyOf(small)).isNotEqualTo(List.copyOf(large));
        assertThat(key("byValue", small)).isEqualTo(key("byValue", large)).isEqualTo(key("byValue", new TreeSet<>(small)));
        Map<String, Object> first = new LinkedHashMap<>();
        first.put("b", List.of(new long[] {2}));
        first.put("a", 1);
        Map<String, Object> second = new HashMap<>(Map.of("a", 1, "b", List.of(new long[] {2})));
        assertThat(key("byValue", first)).isEqualTo("{a=1, b=[[2]]}").isEqualTo(key("byValue", second));
        assertThat(key("byValue", Optional.of(new long[] {4}))).isEqualTo("Optional[[4]]");
    }

    @Test
    void aKeyValueWithoutTextOfItsOwnIsRefusedAtEachCallNamingMethodAndExpression() {
        for (Object value : List.of(new OpenOpaque(), List.of("a", new OpenOpaque()), new Object[] {new Object()},
                Map.of("k", new OpenOpaque()), Optional.of(new OpenOpaque()), Set.of(List.of(new OpenOpaque())))) {
            assertThatIllegalArgumentException().as("%s", value).isThrownBy(() -> key("byValue", value))
                    .withMessageContaining("Catalogue.byValue(Object)").withMessageContaining("key expression \"#value\"")
                    .withMessageContaining("does not override toString()");
        }
        assertThatIllegalArgumentException().isThrownBy(() -> key("byValue", List.of(new OpenOpaque())))
                .withMessageContaining("evaluated to a java.util.ImmutableCollections$List12 holding a " + OpenOpaque.class.getName())
                .withMessageContaining("override toString() in " + OpenOpaque.class.getName());
    }

    @ParameterizedTest
    @ValueSource(strings = {"byOpaque", "byOpaqueAtP0", "byOpaqueAtA0", "byOpaques"})
    void aParameterWhoseTypeCannotHaveTextOfItsOwnIsRefusedAtStartUp(String methodName) {
        String expression = method(methodName).getAnnotation(DistributedLock.class).key()[0];
        assertThatIllegalStateException().isThrownBy(() -> resolve(methodName))
                .withMessageContaining("Catalogue." + methodName + "(Opaque")
                .withMessageContaining("key expression \"" + expression + "\" is a parameter of type")
                .withMessageContaining(Opaque.class.getName() + " does not override toString()")
                .withMessageContaining("override toString() in " + Opaque.class.getName());
    }

    static Stream<Arguments> parametersWhoseValuesMayHaveText() {
        return Stream.of(
                Arguments.of("byValue", "#value", new OpenOpaque()),
                Arguments.of("byOpen", "#open", new OpenOpaque()),
                Arguments.of("byNamed", "#named", new Named() {
                }),
                Arguments.of("byItems", "#items", List.of(new Opaque())),
                Arguments.of("byOpaqueInText", "'at:' + #opaque", new Opaque()));
    }

    @ParameterizedTest
    @MethodSource("parametersWhoseValuesMayHaveText")
    void aValueWithoutTextOfItsOwnIsRefusedAtTheCallWhenItsParameterIsNotRefusedAtStartUp(String methodName, String expression,
            Object value) {
        DistributedLockOperation operation = resolve(methodName);
        assertThatIllegalArgumentException().isThrownBy(() -> new LockKeyResolver(expressions).keys(operation, new Object[] {value}, Catalogue.class))
                .withMessageContaining("Catalogue." + methodName + "(").withMessageContaining("\"" + expression + "\"")
                .withMessageContaining("does not override toString()");
    }

    @Test
    void anArrayJoinedIntoTextIsWrittenByContent() {
        assertThat(key("byIdsInText", (Object) new long[] {1, 2})).isEqualTo("ids:[1, 2]");
    }

    @Test
    void theTargetBeanIsRefusedAtStartUp() {
        assertThatIllegalStateException().isThrownBy(() -> resolve("byTarget"))
                .withMessageContaining("Catalogue.byTarget()").withMessageContaining("key expression \"#root.target\"")
                .withMessageContaining("differs in every JVM").withMessageContaining("reaches other beans");
    }

    @ParameterizedTest
    @ValueSource(strings = {"byStaticGetter", "byStaticField"})
    void propertiesOfAClassAreRefusedAtEachCallNamingMethodAndExpression(String methodName) {
        String expression = method(methodName).getAnnotation(DistributedLock.class).key()[0];
        DistributedLockOperation operation = resolve(methodName);
        assertThatIllegalArgumentException().isThrownBy(() -> new LockKeyResolver(expressions).keys(operation, new Object[0], Catalogue.class))
                .withMessageContaining("Catalogue." + methodName + "()").withMessageContaining("\"" + expression + "\"")
                .withMessageContaining("cannot read properties of a class");
        assertThat(Catalogue.secretReads).as("the static getter never ran").hasValue(0);
        assertThat(key("byTargetClass")).as("the class itself and its name still make a key")
                .isEqualTo("class " + Catalogue.class.getName() + "/Catalogue");
    }
}
