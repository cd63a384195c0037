package io.github.redislock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.github.redislock.docs.MarkdownPages.CodeBlock;
import io.github.redislock.docs.SnippetCompiler.Result;

/** Every ```java block of README.md, CONTRIBUTING.md and docs/ compiles; see {@link SnippetCompiler} for the forms. */
class JavaSnippetsCompileTest {

    @Test
    void everyJavaBlockOfThePagesCompiles() throws Exception {
        List<String> problems = problems(MarkdownPages.root());
        assertThat(problems).withFailMessage(() -> problems.size() + " problem(s) with ```java blocks (each is "
                + "compiled alone with the default imports of SnippetCompiler; declare what a block assumes in a "
                + "<!-- snippet-context: ... --> comment right before its fence):\n\n" + String.join("\n\n", problems))
                .isEmpty();
    }

    static List<String> problems(Path docsRoot) throws Exception {
        Path root = docsRoot.toAbsolutePath().normalize();
        List<String> problems = new ArrayList<>();
        try (SnippetCompiler compiler = new SnippetCompiler(root)) {
            for (Path page : MarkdownPages.pages(root)) {
                for (CodeBlock block : MarkdownPages.codeBlocks(page)) {
                    hiddenFence(root, block).ifPresent(problems::add);
                }
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

    /**
     * A fence with a language inside another block: its closing fence is missing, and GitHub shows what follows as
     * code, so a ```java block there is neither rendered nor checked. (A ```markdown block may show fences.)
     */
    private static Optional<String> hiddenFence(Path root, CodeBlock block) {
        if (block.language().equals("markdown") || block.language().equals("md")) {
            return Optional.empty();
        }
        for (int i = 0; i < block.body().size(); i++) {
            String line = block.body().get(i).trim();
            if (line.matches("(```+|~~~+)\\s*\\w.*")) {
                return Optional.of(block.where(root) + ": the ```" + block.language() + " block opened here runs over the fence "
                        + line + " on line " + (block.line() + 1 + i) + ": is its closing fence missing above that line?");
            }
        }
        return Optional.empty();
    }

    private static String describe(Path root, CodeBlock block, Result result) {
        StringBuilder text = new StringBuilder(block.where(root) + ": ```java block, compiled as "
                + result.form().description + ", does not compile:");
        result.errors().stream().limit(8).forEach(error -> text.append("\n    ").append(error));
        if (result.errors().size() > 8) {
            text.append("\n    ... and ").append(result.errors().size() - 8).append(" more");
        }
        return text.toString();
    }
}
