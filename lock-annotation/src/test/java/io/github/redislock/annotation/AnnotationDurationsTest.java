package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AnnotationDurationsTest {

    @ParameterizedTest
    @CsvSource({"2s, 2000", "500ms, 500", "1m, 60000", "1h, 3600000", "1d, 86400000", "PT2S, 2000", "PT0.25S, 250",
            "0s, 0", "' 3 S ', 3000"})
    void readsSimpleUnitsAndIsoDurations(String text, long millis) {
        assertThat(AnnotationDurations.parse(text, "waitTime")).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  "})
    void anEmptyStringMeansTheDefault(String text) {
        assertThat(AnnotationDurations.parse(text, "waitTime")).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"two seconds", "2 sec", "s", "-2s", "1.5s"})
    void anythingElseIsRefusedNamingTheAttributeAndTheText(String text) {
        assertThatIllegalArgumentException().isThrownBy(() -> AnnotationDurations.parse(text, "leaseTime"))
                .withMessageContaining("leaseTime = \"" + text + "\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT-2S", "-PT2S"})
    void aNegativeIsoDurationIsRefused(String text) {
        assertThatIllegalArgumentException().isThrownBy(() -> AnnotationDurations.parse(text, "waitTime"))
                .withMessageContaining("must not be negative");
    }
}
