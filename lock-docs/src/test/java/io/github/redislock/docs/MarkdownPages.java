package io.github.redislock.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads the project's markdown pages the way GitHub shows them: the pages to check, their fenced code blocks (with
 * the {@code <!-- snippet-context: ... -->} comment before a fence), their links outside code, and the anchors their
 * headings get.
 */
final class MarkdownPages {

    /** The checked pages: README.md (required), CONTRIBUTING.md when present, and every .md file under docs/. */
    static List<Path> pages(Path root) {
        Path readme = root.resolve("README.md");
        if (!Files.isRegularFile(readme)) {
            // a wrong docs.root must fail the checks, not make them pass on no pages
            throw new IllegalStateException("no README.md in " + root.toAbsolutePath().normalize()
                    + ": docs.root must be the repository's root (or a fixture folder shaped like it)");
        }
        List<Path> pages = new ArrayList<>(List.of(readme));
        Path contributing = root.resolve("CONTRIBUTING.md");
        if (Files.isRegularFile(contributing)) {
            pages.add(contributing);
        }
        Path docs = root.resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> files = Files.walk(docs)) {
                files.filter(file -> file.toString().endsWith(".md")).sorted().forEach(pages::add);
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        return pages;
    }

    /** The folder the checks read: the {@code docs.root} system property, else the repository above this module. */
    static Path root() {
        return Path.of(System.getProperty("docs.root", "..")).toAbsolutePath().normalize();
    }

    /** A fenced code block: {@code line} is the line of its opening fence (1-based). */
    record CodeBlock(Path file, int line, String language, List<String> body, String context) {

        String where(Path root) {
            return root.relativize(file) + ":" + line;
        }
    }

    /** A line of prose (outside code blocks and HTML comments), 1-based. */
    record Line(int number, String text) {
    }

    /** A relative link or image target as written, e.g. {@code docs/locks.md#fair-locks} or {@code #top}. */
    record Link(Path file, int line, String target) {
    }

    private static final Pattern FENCE = Pattern.compile("^( *)(`{3,}|~{3,})\\s*([^\\s`]*)[^`]*$");

    private static final Pattern CONTEXT = Pattern.compile("(?s)<!--\\s*snippet-context:(.*)-->\\s*");

    static List<CodeBlock> codeBlocks(Path file) {
        List<String> lines = read(file);
        List<CodeBlock> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int indent = open.group(1).length();
            String fence = open.group(2);
            List<String> body = new ArrayList<>();
            int j = i + 1;
            while (j < lines.size() && !closes(lines.get(j), fence)) {
                body.add(stripIndent(lines.get(j), indent));
                j++;
            }
            blocks.add(new CodeBlock(file, i + 1, open.group(3).toLowerCase(Locale.ROOT), body, contextBefore(lines, i)));
            i = j; // an unclosed fence runs to the end of the page, as on GitHub
        }
        return blocks;
    }

    static List<CodeBlock> codeBlocks(Path file, String... languages) {
        Set<String> wanted = Set.of(languages);
        return codeBlocks(file).stream().filter(block -> wanted.contains(block.language())).toList();
    }

    /** The lines GitHub renders as text: outside fenced code and HTML comments. */
    static List<Line> prose(Path file) {
        List<String> lines = read(file);
        List<Line> prose = new ArrayList<>();
        String fence = null;
        boolean inComment = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (fence != null) {
                if (closes(line, fence)) {
                    fence = null;
                }
                continue;
            }
            Matcher open = FENCE.matcher(line);
            if (!inComment && open.matches()) {
                fence = open.group(2);
                continue;
            }
            StringBuilder text = new StringBuilder();
            int at = 0;
            while (at < line.length()) {
                int next = line.indexOf(inComment ? "-->" : "<!--", at);
                if (next < 0) {
                    if (!inComment) {
                        text.append(line, at, line.length());
                    }
                    break;
                }
                if (!inComment) {
                    text.append(line, at, next);
                }
                at = next + (inComment ? 3 : 4);
                inComment = !inComment;
            }
            prose.add(new Line(i + 1, text.toString()));
        }
        return prose;
    }

    private static final Pattern INLINE_CODE = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

    private static final Pattern INLINE_LINK = Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

    private static final Pattern REFERENCE_DEFINITION = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s*<?([^\\s>]+)>?.*$");

    private static final Pattern HTML_LINK = Pattern.compile("<(?:a|img)\\s[^>]*?(?:href|src)=\"([^\"]*)\"");

    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:.*");

    /** Relative links (inline, reference definitions, HTML a/img) outside code; http(s), mailto etc. are left out. */
    static List<Link> links(Path file) {
        List<Link> links = new ArrayList<>();
        for (Line line : prose(file)) {
            String text = INLINE_CODE.matcher(line.text()).replaceAll("");
            for (Pattern pattern : List.of(INLINE_LINK, REFERENCE_DEFINITION, HTML_LINK)) {
                Matcher link = pattern.matcher(text);
                while (link.find()) {
                    String target = link.group(1);
                    if (!SCHEME.matcher(target).matches() && !target.startsWith("//")) {
                        links.add(new Link(file, line.number(), target));
                    }
                }
            }
        }
        return links;
    }

    private static final Pattern ATX_HEADING = Pattern.compile("^ {0,3}#{1,6}(?:\\s+(.*?))?(?:\\s+#+)?\\s*$");

    private static final Pattern SETEXT_UNDERLINE = Pattern.compile("^ {0,3}(=+|-+)\\s*$");

    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s[^>]*?(?:name|id)=\"([^\"]+)\"");

    /** The anchors a page has: its headings' GitHub slugs (repeats get -1, -2, ...), and HTML a name/id. */
    static Set<String> anchors(Path file) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        List<Line> prose = prose(file);
        for (int i = 0; i < prose.size(); i++) {
            Line line = prose.get(i);
            String heading = null;
            Matcher atx = ATX_HEADING.matcher(line.text());
            if (atx.matches()) {
                heading = atx.group(1) == null ? "" : atx.group(1);
            }
            else if (i + 1 < prose.size() && prose.get(i + 1).number() == line.number() + 1
                    && SETEXT_UNDERLINE.matcher(prose.get(i + 1).text()).matches() && !line.text().isBlank()
                    && !line.text().trim().startsWith("|") && !line.text().trim().startsWith("-")) {
                heading = line.text().trim();
            }
            if (heading != null) {
                String slug = slug(heading);
                int repeats = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(repeats == 0 ? slug : slug + "-" + repeats);
            }
            Matcher html = HTML_ANCHOR.matcher(line.text());
            while (html.find()) {
                anchors.add(html.group(1));
            }
        }
        return anchors;
    }

    /**
     * GitHub's anchor for a heading: the rendered text, lower-cased, with everything but letters, digits, '-', '_'
     * and spaces removed, and each space turned into '-'.
     */
    static String slug(String heading) {
        String text = heading.trim()
                .replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1") // links and images: their text
                .replaceAll("<[^>]+>", ""); // inline HTML
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "").replace(' ', '-');
    }

    /** A link target's path part, decoded ({@code %20} and the like); empty for a same-page anchor. */
    static String pathOf(String target) {
        int end = target.length();
        for (char stop : new char[] {'#', '?'}) { // file.md?plain=1#L10
            end = target.indexOf(stop) < 0 ? end : Math.min(end, target.indexOf(stop));
        }
        return decode(target.substring(0, end));
    }

    /** A link target's anchor, decoded, or null when it has none. */
    static String anchorOf(String target) {
        int hash = target.indexOf('#');
        return hash < 0 ? null : decode(target.substring(hash + 1));
    }

    private static String decode(String text) {
        try {
            return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8); // '+' is a plus in a path
        }
        catch (IllegalArgumentException ex) {
            return text; // a stray '%': taken as written
        }
    }

    private static boolean closes(String line, String fence) {
        String trimmed = line.trim();
        return trimmed.length() >= fence.length() && trimmed.chars().allMatch(c -> c == fence.charAt(0));
    }

    private static String stripIndent(String line, int indent) {
        int strip = 0;
        while (strip < indent && strip < line.length() && line.charAt(strip) == ' ') {
            strip++;
        }
        return line.substring(strip);
    }

    /** The text of a {@code <!-- snippet-context: ... -->} comment that ends just before the fence (blank lines aside). */
    private static String contextBefore(List<String> lines, int fence) {
        int end = fence - 1;
        while (end >= 0 && lines.get(end).isBlank()) {
            end--;
        }
        if (end < 0 || !lines.get(end).trim().endsWith("-->")) {
            return "";
        }
        int start = end;
        while (start >= 0 && !lines.get(start).contains("<!--")) {
            start--;
        }
        if (start < 0) {
            return "";
        }
        Matcher context = CONTEXT.matcher(String.join("\n", lines.subList(start, end + 1)).trim());
        return context.matches() ? context.group(1).trim() : "";
    }

    static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private MarkdownPages() {
    }
}
