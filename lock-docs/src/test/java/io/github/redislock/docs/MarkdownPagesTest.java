package io.github.redislock.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.github.redislock.docs.MarkdownPages.CodeBlock;
import io.github.redislock.docs.MarkdownPages.Link;

/** The extractor on the fixture pages under src/test/resources/fixtures. */
class MarkdownPagesTest {

    static Path fixture(String name) throws Exception {
        return Path.of(MarkdownPagesTest.class.getResource("/fixtures/" + name + "/README.md").toURI()).getParent();
    }

    @Test
    void thePagesAreTheReadmeContributingAndEveryPageUnderDocs() throws Exception {
        Path root = fixture("good");
        assertThat(MarkdownPages.pages(root)).containsExactly(root.resolve("README.md"), root.resolve("CONTRIBUTING.md"),
                root.resolve("docs/guide.md"));
    }

    @Test
    void aFolderWithoutReadmeIsAnErrorNotAnEmptySetOfPages(@TempDir Path empty) throws Exception {
        Files.createDirectories(empty.resolve("docs"));
        Files.writeString(empty.resolve("docs/page.md"), "# A page\n");
        assertThatIllegalStateException().isThrownBy(() -> MarkdownPages.pages(empty)).withMessageContaining("no README.md");
    }

    @Test
    void aFenceInsideAListItemLosesItsIndentAndKeepsItsLine() throws Exception {
        CodeBlock yaml = MarkdownPages.codeBlocks(fixture("good").resolve("README.md"), "yaml").get(0);
        assertThat(yaml.line()).isEqualTo(15);
        assertThat(yaml.body()).startsWith("spring:", "  data:");
    }

    @Test
    void theSnippetContextIsTheCommentRightBeforeTheFence() throws Exception {
        List<CodeBlock> java = MarkdownPages.codeBlocks(fixture("good").resolve("README.md"), "java");
        assertThat(java).extracting(CodeBlock::context).containsExactly(
                "record Receipt(long orderId) {}",
                "record Invoice(long id) {}\ninterface Invoices { Invoice find(long id); }\nInvoices invoices;",
                "",
                "LockOperations locks; interface Storage { void write(String key, long token); } Storage storage;",
                "RedisLockTemplate locks;");
    }

    @Test
    void linksAreTakenFromProseNotFromCodeAndNotWhenTheyHaveAScheme() throws Exception {
        assertThat(MarkdownPages.links(fixture("good").resolve("README.md"))).extracting(Link::target).containsExactly(
                "docs/guide.md", "docs/guide.md#whats-lockoptions", "docs/guide.md#example-1", "#quick-start", "docs/",
                "docs/picture.svg", "docs/guide.md");
    }

    @Test
    void headingsGetGitHubsAnchorsWithNumberedRepeats() throws Exception {
        assertThat(MarkdownPages.anchors(fixture("good").resolve("docs/guide.md")))
                .containsExactly("guide", "whats-lockoptions", "example", "example-1");
        assertThat(MarkdownPages.slug("Redlock: N masters, `locks = \"...\"` & friends!"))
                .isEqualTo("redlock-n-masters-locks----friends");
        assertThat(MarkdownPages.slug("Spring_Boot [docs](x.md) 4.1")).isEqualTo("spring_boot-docs-41");
    }

    @Test
    void aLinkTargetSplitsIntoItsDecodedPathAndAnchor() {
        assertThat(MarkdownPages.pathOf("docs/my%20page.md?plain=1#L10")).isEqualTo("docs/my page.md");
        assertThat(MarkdownPages.anchorOf("docs/my%20page.md?plain=1#L10")).isEqualTo("L10");
        assertThat(MarkdownPages.pathOf("#quick-start")).isEmpty();
        assertThat(MarkdownPages.anchorOf("docs/guide.md")).isNull();
    }
}
