package io.github.redislock.docs;

import static io.github.redislock.docs.MarkdownPagesTest.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.github.redislock.docs.MarkdownPages.CodeBlock;
import io.github.redislock.docs.SnippetCompiler.Form;
import io.github.redislock.docs.SnippetCompiler.Result;

/**
 * The checks on the fixture folders: src/test/resources/fixtures/good passes each of them, and every mistake planted in
 * fixtures/broken is reported with its page and line.
 */
class DocChecksOnFixturesTest {

    @Test
    void eachFormOfJavaBlockCompilesWithItsContext() throws Exception {
        Path root = fixture("good");
        List<CodeBlock> blocks = MarkdownPages.codeBlocks(root.resolve("README.md"), "java");
        try (SnippetCompiler compiler = new SnippetCompiler(root)) {
            List<Result> results = blocks.stream().map(compiler::compile).toList();
            assertThat(results).allSatisfy(result -> assertThat(result.errors()).isEmpty());
            assertThat(results).extracting(Result::form)
                    .containsExactly(Form.UNIT, Form.MEMBERS, Form.MEMBERS, Form.STATEMENTS, Form.STATEMENTS);
        }
    }

    @Test
    void theGoodFixturePassesTheSnippetYamlAndLinkChecks() throws Exception {
        Path good = fixture("good");
        assertThat(JavaSnippetsCompileTest.problems(good)).isEmpty();
        assertThat(YamlBlocksBindTest.problems(good)).isEmpty();
        assertThat(LinksResolveTest.problems(good)).isEmpty();
    }

    @Test
    void aSnippetThatDoesNotCompileOrHidesInAnotherBlockIsReportedWithItsLines() throws Exception {
        List<String> problems = JavaSnippetsCompileTest.problems(fixture("broken"));
        assertThat(problems).hasSize(3);
        assertThat(problems.get(0)).startsWith("README.md:5: ```java block, compiled as members of a class, does not compile:")
                .contains("README.md:7: illegal start of expression", "public Receipt pay(long orderId) { ... }");
        assertThat(problems.get(1)).startsWith("README.md:13: ```java block, compiled as statements of a method")
                .contains("README.md:15: cannot find symbol (symbol: method renewNow())", "lock.renewNow();");
        assertThat(problems.get(2)).isEqualTo("docs/guide.md:5: the ```bash block opened here runs over the fence ```java on line 8: "
                + "is its closing fence missing above that line?");
    }

    @Test
    void anUnknownKeyAMistypedValueAndBadYamlAreReportedWithTheirLines() throws Exception {
        assertThat(YamlBlocksBindTest.problems(fixture("broken"))).containsExactly(
                "README.md:23: unknown property 'redis-lock.wait-tme' (not in any spring-configuration-metadata.json)",
                "README.md:28: unknown property 'spring.data.redis.hots' (not in any spring-configuration-metadata.json)",
                "README.md:24: 'redis-lock.lease-time' does not bind to java.time.Duration: 'soon' is not a valid duration",
                "README.md:33: does not parse as YAML: expected ',' or ']', but got <stream end> (while parsing a flow sequence)",
                "README.md:39: unknown property 'redis-lock.replica-ack.replica' (not in any spring-configuration-metadata.json)",
                "README.md:39: 'redis-lock.replica-ack.replica' is not a property of RedisLockProperties");
    }

    @Test
    void everyBrokenLinkIsListedWithItsLine() throws Exception {
        assertThat(LinksResolveTest.problems(fixture("broken"))).containsExactly(
                "README.md:44: (docs/missing.md) no such file: docs/missing.md",
                "README.md:44: (docs/guide.md#no-such-heading) no heading with the anchor #no-such-heading in docs/guide.md",
                "README.md:45: (#placeholder) no heading with the anchor #placeholder in README.md",
                "docs/guide.md:3: (../../../../outside.md) points outside the repository");
    }

    @Test
    void aStaleTableFailsWithTheCommandThatRegeneratesItAndUpdateRewritesIt(@TempDir Path root) throws Exception {
        Files.writeString(root.resolve("README.md"), "# Project\n");
        Files.createDirectories(root.resolve("docs"));
        Path page = root.resolve("docs/configuration.md");
        Files.copy(fixture("broken").resolve("docs/configuration.md"), page);

        List<String> stale = ConfigurationTableTest.problems(root, false);
        assertThat(stale).singleElement().asString()
                .contains("the property table is stale", "./mvnw -pl lock-docs -am verify -Ddocs.update=true",
                        "- | `redis-lock.wait-time` | `Duration` | `5s` | How long to wait for a lock. |",
                        "+ | `redis-lock.wait-time` | `Duration` | `10s` |");

        assertThat(ConfigurationTableTest.problems(root, true)).isEmpty();
        String updated = Files.readString(page);
        assertThat(updated).startsWith("# Configuration\n\n<!-- properties:begin -->\n\n| Property | Type | Default | Description |")
                .contains("| `redis-lock.lease-time` | `Duration` | `30s` | Lease of a lock without an explicit lease;",
                        "| `redis-lock.redlock.nodes` | `List<String>` |  | Independent Redis masters",
                        "| `redis-lock.enabled` | `Boolean` | `true` | Whether to enable distributed locks")
                .endsWith("|\n\n<!-- properties:end -->\n");
        assertThat(ConfigurationTableTest.problems(root, false)).isEmpty();
    }

    @Test
    void everyCheckFailsOnAFolderWithoutReadme(@TempDir Path root) throws Exception {
        Files.createDirectories(root.resolve("docs"));
        Files.writeString(root.resolve("docs/configuration.md"), "# Configuration\n");
        assertThatIllegalStateException().isThrownBy(() -> JavaSnippetsCompileTest.problems(root));
        assertThatIllegalStateException().isThrownBy(() -> YamlBlocksBindTest.problems(root));
        assertThatIllegalStateException().isThrownBy(() -> LinksResolveTest.problems(root));
        assertThatIllegalStateException().isThrownBy(() -> ConfigurationTableTest.problems(root, false));
    }
}
