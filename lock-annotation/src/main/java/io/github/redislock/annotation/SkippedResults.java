package io.github.redislock.annotation;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * What a method returns when {@code onFailure = SKIP} skips it: an empty value of its return type where there is
 * one (so callers can iterate, stream or join it), else {@code null}.
 */
final class SkippedResults {

    private SkippedResults() {
    }

    /** What a skipped call of a method with this return type returns. */
    static @Nullable Object forReturnType(Class<?> type) {
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == List.class || type == Collection.class || type == Iterable.class) {
            return List.of();
        }
        if (type == Set.class) {
            return Set.of();
        }
        if (type == SortedSet.class || type == NavigableSet.class) {
            return Collections.emptyNavigableSet();
        }
        if (type == Map.class) {
            return Map.of();
        }
        if (type == SortedMap.class || type == NavigableMap.class) {
            return Collections.emptyNavigableMap();
        }
        if (type == Stream.class) {
            return Stream.empty();
        }
        if (type == CompletableFuture.class || type == CompletionStage.class || type == Future.class) {
            return CompletableFuture.completedFuture(null); // a caller that joins it must not meet null
        }
        return null;
    }
}
