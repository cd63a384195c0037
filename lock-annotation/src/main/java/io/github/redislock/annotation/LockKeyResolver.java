package io.github.redislock.annotation;

import java.util.SortedSet;
import java.util.TreeSet;

import io.github.redislock.core.RedisLockTemplate;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;

/**
 * Works out the lock keys of one call of a {@link DistributedLockOperation}: evaluates its key expressions
 * against the call's arguments, writes each value as text by content ({@link LockKeyValues}), joins the
 * {@code name} before it and checks the result; every refusal names the method and the expression.
 */
final class LockKeyResolver {

    private final LockKeyExpressions expressions;

    LockKeyResolver(LockKeyExpressions expressions) {
        this.expressions = expressions;
    }

    /**
     * The lock keys for one call: sorted and without duplicates, so several keys are always taken in
     * the same order.
     */
    SortedSet<String> keys(DistributedLockOperation operation, @Nullable Object[] args, Class<?> targetClass) {
        String name = operation.name;
        String description = operation.description;
        SortedSet<String> resolved = new TreeSet<>();
        if (operation.keys.isEmpty()) {
            resolved.add(name);
            return resolved;
        }
        for (Expression key : operation.keys) {
            Object value;
            String text;
            try {
                value = expressions.evaluate(key, operation.method, args, targetClass);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(description + ": " + e.getMessage(), e);
            }
            try {
                text = value == null ? null : LockKeyValues.render(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(description + ": key expression \"" + key.getExpressionString()
                        + "\" evaluated to " + e.getMessage(), e);
            }
            if (text == null || text.isBlank()) {
                throw new IllegalArgumentException(description + ": key expression \"" + key.getExpressionString()
                        + "\" evaluated to " + (value == null ? "null" : "a blank string") + " for this call");
            }
            String full = name.isEmpty() ? text : name + ":" + text;
            try {
                resolved.add(RedisLockTemplate.validateKey(full));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(description + ": key expression \"" + key.getExpressionString() + "\": "
                        + e.getMessage(), e);
            }
        }
        return resolved;
    }
}
