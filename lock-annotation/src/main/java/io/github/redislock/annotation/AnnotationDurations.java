package io.github.redislock.annotation;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/** Parses the annotation's duration strings: {@code "2s"}, {@code "500ms"}, {@code "1m"}, {@code "PT2S"}. */
final class AnnotationDurations {

    private static final Pattern SIMPLE = Pattern.compile("^\\s*(\\d+)\\s*(ns|us|ms|s|m|h|d)\\s*$", Pattern.CASE_INSENSITIVE);

    private AnnotationDurations() {
    }

    /**
     * @return the duration, or {@code null} for an empty string
     * @throws IllegalArgumentException naming {@code attribute} when it does not parse or is negative
     */
    static @Nullable Duration parse(@Nullable String text, String attribute) {
        if (text == null || text.isBlank()) {
            return null;
        }
        Matcher simple = SIMPLE.matcher(text);
        Duration duration;
        if (simple.matches()) {
            long amount = Long.parseLong(simple.group(1));
            duration = switch (simple.group(2).toLowerCase()) {
                case "ns" -> Duration.ofNanos(amount);
                case "us" -> Duration.ofNanos(amount * 1000);
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        } else {
            try {
                duration = Duration.parse(text.trim());
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException(attribute + " = \"" + text
                        + "\" is not a duration; use e.g. \"2s\", \"500ms\", \"1m\" or \"PT2S\"");
            }
        }
        if (duration.isNegative()) {
            throw new IllegalArgumentException(attribute + " = \"" + text + "\" must not be negative");
        }
        return duration;
    }
}
