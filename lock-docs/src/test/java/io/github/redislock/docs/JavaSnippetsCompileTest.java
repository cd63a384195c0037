package io.github.redislock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.redislock.docs.MarkdownPages.CodeBlock;
import io.github.redislock.docs.SnippetCompiler.Result;

/** Every ```java block of README.md, CONTRIBUTING.md and docs/ compiles; see {@link SnippetCompiler} for the forms. */
class JavaSnippetsCompileTest {

    @Test
    void everyJavaBlockOfThePagesCompiles() throws Exception {
        List<String> problems = problems(MarkdownPages.root());
        assertThat(problems).withFailMessage(() -> problems.size() + " ```java block(s) do not compile (each is "
                + "compiled alone with the default imports of SnippetCompiler; declare what a block assumes in a "
                + "<!-- snippet-context: ... --> comment right before its fence):\n\n" + String.join("\n\n", problems))
                .isEmpty();
    }

    static List<String> problems(Path docsRoot) throws Exception {
        Path root = docsRoot.toAbsolutePath().normalize();
        List<String> problems = new ArrayList<>();
        try (SnippetCompiler compiler = new SnippetCompiler(root)) {
            for (Path page : MarkdownPages.pages(root)) {
                for (CodeBlock block : MarkdownPages.codeBlocks(page, "java")) {
                    Result result = compiler.compile(block);
                    if (!result.compiled()) {
                        problems.add(describe(root, block, result));
                    }
                }
            }
        }
        return problems;
    }

    private static String describe(Path root, CodeBlock block, Result result) {
        StringBuilder text = new StringBuilder(block.where(root) + ": ```java block, compiled as "
                + result.form().description + ", does not compile:");
        result.errors().stream().limit(8).forEach(error -> text.append("\n    ").append(error));
        if (result.errors().size() > 8) {
            text.append("\n    ... and ").append(result.errors().size() - 8).append(" more");
        }
        block.body().stream().filter(line -> line.trim().matches("(```|~~~)\\w+.*")).findFirst()
                .ifPresent(fence -> text.append("\n    (a fence opens inside this block: is a closing fence missing above it?)"));
        return text.toString();
    }
}
