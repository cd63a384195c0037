package io.github.redislock.annotation;

import java.lang.reflect.Array;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Turns the value of a key expression into the lock key's text, by content: the same value gives the
 * same text on every call and in every JVM, or the call is refused.
 * <p>
 * Arrays (primitive or not, nested), collections, maps and {@link Optional} are written by their
 * elements, {@code [1, 2, 3]} and {@code {a=1, b=2}}; sets and maps are written sorted by their
 * elements' text, so equal ones give one text whatever their class or history. Any other value must come from a class that
 * overrides {@link Object#toString()} (records, enums, {@code String}, numbers do): {@code Object}'s
 * text, {@code com.acme.Customer@6d06d69c}, differs between equal values and between JVMs, so a lock
 * on it would exclude nothing.
 */
final class LockKeyValues {

    private LockKeyValues() {
    }

    /**
     * The text of a key value.
     *
     * @throws WithoutText when the value, or one of its elements, has no text of its own; the message
     *         ("a Customer, which ...") says which class and what to do, the caller adds the method, the
     *         expression and a verb
     */
    static String render(Object value) {
        StringBuilder text = new StringBuilder();
        render(value, value, text, Collections.newSetFromMap(new IdentityHashMap<>()));
        return text.toString();
    }

    private static void render(@Nullable Object value, Object whole, StringBuilder text, Set<Object> open) {
        if (value == null) {
            text.append("null");
            return;
        }
        Class<?> type = value.getClass();
        if (!renderedByContent(type)) {
            if (!overridesToString(type)) {
                throw new WithoutText(noTextOfItsOwn(value, whole));
            }
            text.append(value);
            return;
        }
        if (!open.add(value)) {
            throw new WithoutText("a " + whole.getClass().getName() + " that contains itself");
        }
        if (type.isArray()) {
            List<String> elements = new ArrayList<>();
            for (int i = 0; i < Array.getLength(value); i++) {
                elements.add(renderPart(Array.get(value, i), whole, open));
            }
            join(elements, "[", "]", text);
        } else if (value instanceof Collection<?> collection) {
            List<String> elements = new ArrayList<>(collection.size());
            for (Object element : collection) {
                elements.add(renderPart(element, whole, open));
            }
            if (value instanceof Set<?>) {
                Collections.sort(elements); // equal sets, equal text: a HashSet's order depends on its history
            }
            join(elements, "[", "]", text);
        } else if (value instanceof Map<?, ?> map) {
            List<String> entries = new ArrayList<>(map.size());
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                entries.add(renderPart(entry.getKey(), whole, open) + "=" + renderPart(entry.getValue(), whole, open));
            }
            Collections.sort(entries);
            join(entries, "{", "}", text);
        } else {
            Optional<?> optional = (Optional<?>) value;
            if (optional.isPresent()) {
                text.append("Optional[");
                render(optional.get(), whole, text, open);
                text.append(']');
            } else {
                text.append("Optional.empty");
            }
        }
        open.remove(value);
    }

    private static String renderPart(Object value, Object whole, Set<Object> open) {
        StringBuilder text = new StringBuilder();
        render(value, whole, text, open);
        return text.toString();
    }

    private static void join(List<String> parts, String open, String close, StringBuilder text) {
        text.append(open).append(String.join(", ", parts)).append(close);
    }

    private static String noTextOfItsOwn(Object value, Object whole) {
        String type = value.getClass().getName();
        String found = value == whole ? "a " + type : "a " + whole.getClass().getName() + " holding a " + type;
        return found + ", which does not override toString(): its text (" + type + "@...) differs between equal values "
                + "and between JVMs, so the lock would not exclude; key on one of its properties (an id) instead, or "
                + "override toString() in " + type;
    }

    /** A key value that has no text of its own. */
    static final class WithoutText extends IllegalArgumentException {

        WithoutText(String message) {
            super(message);
        }
    }

    /** Whether values of the type are written by their elements rather than by their own {@code toString()}. */
    static boolean renderedByContent(Class<?> type) {
        return type.isArray() || Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type)
                || Optional.class == type;
    }

    static boolean overridesToString(Class<?> type) {
        try {
            return type.getMethod("toString").getDeclaringClass() != Object.class;
        } catch (NoSuchMethodException e) {
            return true; // interfaces: the value's own class decides, at the call
        }
    }

    /**
     * The class at fault when every value of a declared type is certain to have no text of its own: a
     * final class that does not override {@code toString()}, or an array of one. Otherwise {@code null};
     * an interface, an abstract or open class, {@code Object}, a collection may all hold values that
     * have a text, and are checked at each call instead.
     */
    static @Nullable Class<?> certainlyWithoutText(Class<?> declared) {
        if (declared.isArray()) {
            return certainlyWithoutText(declared.getComponentType());
        }
        if (declared.isPrimitive() || declared.isInterface() || renderedByContent(declared)
                || !Modifier.isFinal(declared.getModifiers())) {
            return null;
        }
        return overridesToString(declared) ? null : declared;
    }
}
