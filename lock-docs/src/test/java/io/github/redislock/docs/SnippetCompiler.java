package io.github.redislock.docs;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

import com.sun.source.util.JavacTask;

import io.github.redislock.docs.MarkdownPages.CodeBlock;

/**
 * Compiles a ```java block of a page, in process, against this module's test classpath. A block is one of:
 * <ol>
 * <li>a compilation unit: it declares top-level types (its own imports allowed, a package line dropped); the
 * snippet-context follows it as further top-level declarations;</li>
 * <li>members of a class: fields and methods (annotated ones, say), nested types too; the snippet-context joins them
 * as further members;</li>
 * <li>statements: the body of {@code void snippet() throws Exception}, in a class whose members are the
 * snippet-context.</li>
 * </ol>
 * Every form gets {@link #DEFAULT_IMPORTS}, and import lines in a block or its context are moved to the top. The form
 * is the one that parses; when none does, the one that parses furthest into the block (the first form on a tie), and
 * its diagnostics are the ones reported.
 */
final class SnippetCompiler implements AutoCloseable {

    /** Imported into every snippet: the project's user-facing packages and what examples use most. */
    static final List<String> DEFAULT_IMPORTS = List.of(
            "io.github.redislock.core.*",
            "io.github.redislock.annotation.*",
            "io.github.redislock.autoconfigure.*",
            "io.github.redislock.integration.*",
            "io.github.redislock.shedlock.*",
            "io.github.redislock.testing.*",
            "java.time.*",
            "java.util.*",
            "java.util.concurrent.*",
            "org.springframework.stereotype.*",
            "org.springframework.context.annotation.*",
            "org.springframework.beans.factory.annotation.*",
            "org.springframework.scheduling.annotation.*");

    enum Form {
        UNIT("a compilation unit"), MEMBERS("members of a class"), STATEMENTS("statements of a method");

        final String description;

        Form(String description) {
            this.description = description;
        }
    }

    /** How a block was compiled: the form, and its errors (none when it compiled). */
    record Result(Form form, List<String> errors) {

        boolean compiled() {
            return errors.isEmpty();
        }
    }

    private static final Pattern IMPORT = Pattern.compile("^\\s*import\\s+(static\\s+)?[\\w.]+(\\.\\*)?\\s*;\\s*$");

    private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+[\\w.]+\\s*;\\s*$");

    private final JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();

    private final StandardJavaFileManager files;

    private final Path root;

    /** A compiler for blocks of pages under {@code root} (the folder diagnostics name pages relative to). */
    SnippetCompiler(Path root) {
        this.root = root.toAbsolutePath().normalize();
        this.files = compiler.getStandardFileManager(null, Locale.ROOT, null);
        try {
            // surefire starts the test JVM from a manifest-only jar and names the real classpath in this property
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            this.files.setLocation(StandardLocation.CLASS_PATH, Arrays.stream(classpath.split(File.pathSeparator))
                    .filter(entry -> !entry.isBlank()).map(File::new).toList());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    Result compile(CodeBlock block) {
        String className = "Snippet_" + block.file().getFileName().toString().replaceAll("\\W", "_") + "_" + block.line();
        List<Source> candidates = new ArrayList<>();
        for (Form form : Form.values()) {
            candidates.add(new Source(form, className, block, root.relativize(block.file()).toString()));
        }
        for (Source source : candidates) {
            source.firstParseError = firstParseError(source);
        }
        candidates.sort(Comparator.comparingLong((Source source) -> -source.firstParseError)); // stable: form order on ties
        List<Source> parsing = candidates.stream().filter(source -> source.firstParseError == Long.MAX_VALUE).toList();
        if (parsing.isEmpty()) {
            return new Result(candidates.get(0).form, errors(candidates.get(0)));
        }
        Result first = null;
        for (Source source : parsing) {
            Result result = new Result(source.form, errors(source));
            if (result.compiled()) {
                return result;
            }
            first = first == null ? result : first;
        }
        return first;
    }

    /** Offset into the block of the first syntax error, {@code Long.MAX_VALUE} when the form parses. */
    private long firstParseError(Source source) {
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics, options(), null, List.of(source));
        try {
            task.parse();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .mapToLong(d -> Math.max(0, Math.min(d.getPosition(), source.bodyEnd) - source.bodyStart))
                .min().orElse(Long.MAX_VALUE);
    }

    private List<String> errors(Source source) {
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics, options(), null, List.of(source));
        try {
            task.analyze(); // attribution and flow checks: every error javac reports, without writing class files
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        LinkedHashSet<String> errors = new LinkedHashSet<>(); // javac repeats a missing symbol at each use on a line
        for (Diagnostic<? extends JavaFileObject> diagnostic : diagnostics.getDiagnostics()) {
            if (diagnostic.getKind() == Diagnostic.Kind.ERROR) {
                errors.add(source.describe(diagnostic));
            }
        }
        return List.copyOf(errors);
    }

    private static List<String> options() {
        return List.of("-proc:none", "--release", "17", "-Xlint:none", "-nowarn", "-encoding", "UTF-8");
    }

    @Override
    public void close() throws IOException {
        files.close();
    }

    /**
     * One form of a block as a Java source: line 1 holds the default imports, line 2 the moved imports and the
     * wrapper's opening, and the block's line n is the source's line n + 2, so diagnostics map back to the page.
     */
    private static final class Source extends SimpleJavaFileObject {

        private static final int HEADER_LINES = 2;

        final Form form;

        final CodeBlock block;

        final String page;

        final String text;

        final int bodyStart;

        final int bodyEnd;

        long firstParseError;

        Source(Form form, String className, CodeBlock block, String page) {
            super(URI.create("string:///" + className + ".java"), Kind.SOURCE);
            this.form = form;
            this.block = block;
            this.page = page;
            List<String> imports = new ArrayList<>();
            List<String> body = new ArrayList<>();
            for (String line : block.body()) {
                boolean moved = form != Form.UNIT && IMPORT.matcher(line).matches();
                if (moved) {
                    imports.add(line.trim());
                }
                body.add(moved || PACKAGE.matcher(line).matches() ? "" : line);
            }
            List<String> context = new ArrayList<>();
            for (String line : block.context().lines().toList()) {
                if (IMPORT.matcher(line).matches()) {
                    imports.add(line.trim());
                }
                else {
                    context.add(line);
                }
            }
            StringBuilder text = new StringBuilder();
            DEFAULT_IMPORTS.forEach(name -> text.append("import ").append(name).append("; "));
            text.append('\n');
            imports.forEach(line -> text.append(line).append(' '));
            text.append(switch (form) {
                case UNIT -> "";
                case MEMBERS -> "class " + className + " {";
                case STATEMENTS -> "class " + className + " { void snippet() throws Exception {";
            });
            text.append('\n');
            this.bodyStart = text.length();
            body.forEach(line -> text.append(line).append('\n'));
            this.bodyEnd = text.length();
            text.append(form == Form.STATEMENTS ? "}\n" : "");
            context.forEach(line -> text.append(line).append('\n'));
            text.append(form == Form.UNIT ? "" : "}\n");
            this.text = text.toString();
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }

        @Override
        public boolean isNameCompatible(String simpleName, Kind kind) {
            return true; // a block may declare a public class of any name
        }

        /**
         * "docs/guide.md:92: cannot find symbol (symbol: class Receipt)" and the line of code, with the page's line
         * when the error is in the block.
         */
        String describe(Diagnostic<? extends JavaFileObject> diagnostic) {
            long line = diagnostic.getLineNumber();
            String[] lines = text.split("\n", -1);
            String code = line >= 1 && line <= lines.length ? lines[(int) line - 1].trim() : "";
            long blockLine = line - HEADER_LINES;
            String where = (blockLine >= 1 && blockLine <= block.body().size()) ? page + ":" + (block.line() + blockLine)
                    : page + ":" + block.line() + (line <= HEADER_LINES ? " (imports)" : " (snippet-context)");
            List<String> message = diagnostic.getMessage(Locale.ROOT).lines().map(part -> part.trim().replaceAll("\\s+", " "))
                    .filter(part -> !part.isEmpty() && !part.startsWith("location:")).toList();
            String details = message.size() > 1 ? " (" + String.join(", ", message.subList(1, message.size())) + ")" : "";
            return where + ": " + message.get(0) + details + (code.isEmpty() || line <= HEADER_LINES ? "" : "\n        " + code);
        }
    }
}
