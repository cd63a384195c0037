package io.github.redislock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataProperty;

/**
 * The property table of docs/configuration.md, between {@value #BEGIN} and {@value #END}, is the one the
 * configuration metadata of redis-lock-spring-boot-autoconfigure gives (property, type, default, description). With
 * {@code -Ddocs.update=true} the check writes the table instead of failing.
 */
class ConfigurationTableTest {

    static final String BEGIN = "<!-- properties:begin -->";

    static final String END = "<!-- properties:end -->";

    static final String REGENERATE = "./mvnw -pl lock-docs -am verify -Ddocs.update=true";

    @Test
    void thePropertyTableMatchesTheConfigurationMetadata() throws IOException {
        List<String> problems = problems(MarkdownPages.root(), Boolean.getBoolean("docs.update"));
        assertThat(problems).withFailMessage(() -> String.join("\n", problems)).isEmpty();
    }

    /** What is wrong with the table (nothing once {@code update} has rewritten it). */
    static List<String> problems(Path docsRoot, boolean update) throws IOException {
        Path root = docsRoot.toAbsolutePath().normalize();
        MarkdownPages.pages(root); // the same root check as the other pages' checks
        Path page = root.resolve("docs/configuration.md");
        if (!Files.isRegularFile(page)) {
            return List.of("no docs/configuration.md in " + root + ": it holds the property table between the lines "
                    + BEGIN + " and " + END);
        }
        List<String> lines = MarkdownPages.read(page);
        int begin = lines.stream().map(String::trim).toList().indexOf(BEGIN);
        int end = lines.stream().map(String::trim).toList().indexOf(END);
        if (begin < 0 || end < begin) {
            return List.of("docs/configuration.md: no lines " + BEGIN + " and " + END + " (in that order) around the property table");
        }
        List<String> expected = table(PropertyMetadata.generated());
        List<String> found = trimmed(lines.subList(begin + 1, end));
        if (found.equals(expected)) {
            return List.of();
        }
        if (update) {
            List<String> rewritten = new ArrayList<>(lines.subList(0, begin + 1));
            rewritten.add("");
            rewritten.addAll(expected);
            rewritten.add("");
            rewritten.addAll(lines.subList(end, lines.size()));
            Files.writeString(page, String.join("\n", rewritten) + "\n", StandardCharsets.UTF_8);
            return List.of();
        }
        List<String> diff = new ArrayList<>();
        found.stream().filter(line -> !expected.contains(line)).forEach(line -> diff.add("- " + line));
        expected.stream().filter(line -> !found.contains(line)).forEach(line -> diff.add("+ " + line));
        if (diff.isEmpty()) {
            diff.add("(the same rows in another order)");
        }
        return List.of("docs/configuration.md:" + (begin + 1) + ": the property table is stale: it differs from the "
                + "configuration metadata of redis-lock-spring-boot-autoconfigure.\nRegenerate it with: " + REGENERATE
                + "\n(add -Dtest=ConfigurationTableTest -Dsurefire.failIfNoSpecifiedTests=false to run no other test)."
                + "\nLines of the page (-) and of the metadata's table (+) that differ:\n" + String.join("\n", diff));
    }

    /** The markdown table of every redis-lock.* property, sorted by name. */
    static List<String> table(PropertyMetadata metadata) {
        List<String> table = new ArrayList<>(List.of("| Property | Type | Default | Description |", "| --- | --- | --- | --- |"));
        for (ConfigurationMetadataProperty property : metadata.properties("redis-lock.").values()) {
            String description = (property.getDescription() == null ? "" : property.getDescription())
                    .replaceAll("\\s+", " ").trim();
            if (property.isDeprecated()) {
                description = ("**Deprecated.** " + description).trim();
            }
            table.add("| " + code(property.getId()) + " | " + code(shortType(property.getType())) + " | "
                    + code(defaultValue(property.getDefaultValue())) + " | " + escape(description) + " |");
        }
        return table;
    }

    /** {@code java.util.List<java.lang.String>} as {@code List<String>}. */
    private static String shortType(String type) {
        return type == null ? "" : type.replaceAll("\\b(?:[a-z_][\\w]*\\.)+(?=[A-Z])", "").replace('$', '.');
    }

    /** The default as the metadata has it ({@code 10s} for a Duration); a list's items joined with commas. */
    private static String defaultValue(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof Object[] items) {
            return Arrays.stream(items).map(String::valueOf).collect(Collectors.joining(", "));
        }
        return String.valueOf(value);
    }

    /** Text GitHub would take for markup: a '|' would end the cell, a '<' start HTML, a '*' emphasis. */
    private static String escape(String text) {
        return text.replaceAll("([|<*`\\\\])", "\\\\$1");
    }

    private static String code(String text) {
        return text.isEmpty() ? "" : "`" + text.replace("|", "\\|") + "`";
    }

    /** The lines without trailing spaces, and without the blank lines before and after the table. */
    private static List<String> trimmed(List<String> lines) {
        List<String> trimmed = new ArrayList<>(lines.stream().map(String::stripTrailing).toList());
        while (!trimmed.isEmpty() && trimmed.get(0).isEmpty()) {
            trimmed.remove(0);
        }
        while (!trimmed.isEmpty() && trimmed.get(trimmed.size() - 1).isEmpty()) {
            trimmed.remove(trimmed.size() - 1);
        }
        return trimmed;
    }
}
