package io.github.redislock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.redislock.docs.MarkdownPages.Link;

/**
 * Every relative link of README.md, CONTRIBUTING.md and docs/ ({@code [text](path)}, {@code [text](path#anchor)},
 * {@code [text](#anchor)}, reference definitions, HTML a/img) names an existing file, and its anchor a heading of the
 * target page (GitHub's slugs). Links with a scheme (https:, mailto:) are not followed.
 */
class LinksResolveTest {

    @Test
    void everyRelativeLinkPointsToAnExistingFileAndHeading() {
        List<String> problems = problems(MarkdownPages.root());
        assertThat(problems).withFailMessage(() -> problems.size() + " broken link(s):\n" + String.join("\n", problems))
                .isEmpty();
    }

    static List<String> problems(Path docsRoot) {
        Path root = docsRoot.toAbsolutePath().normalize();
        List<String> problems = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        for (Path page : MarkdownPages.pages(root)) {
            for (Link link : MarkdownPages.links(page)) {
                String where = root.relativize(page) + ":" + link.line() + ": (" + link.target() + ") ";
                String path = MarkdownPages.pathOf(link.target());
                String anchor = MarkdownPages.anchorOf(link.target());
                Path target = (path.isEmpty() ? page
                        : path.startsWith("/") ? root.resolve(path.substring(1)) : page.getParent().resolve(path)).normalize();
                if (!target.startsWith(root)) {
                    problems.add(where + "points outside the repository");
                }
                else if (!Files.exists(target)) {
                    problems.add(where + "no such file: " + root.relativize(target));
                }
                else if (anchor != null && !anchor.isEmpty() && target.toString().endsWith(".md")
                        && !anchors.computeIfAbsent(target, MarkdownPages::anchors).contains(anchor)) {
                    problems.add(where + "no heading with the anchor #" + anchor + " in " + root.relativize(target));
                }
            }
        }
        return problems;
    }
}
