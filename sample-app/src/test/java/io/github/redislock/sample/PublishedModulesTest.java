package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePathScanner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What a release publishes, read from the checkout's poms and sources: the published modules are the root pom's
 * modules whose pom does not set {@code maven.deploy.skip}. The BOM must list each of them, and every public type in
 * them must have a Javadoc comment (the javadoc tool's own check for missing comments also wants every method's
 * {@code @param} and {@code @return}, so it is off in the build).
 */
class PublishedModulesTest {

    private static final String GROUP = "io.github.redislock";

    private static final String BOM = "lock-bom";

    private static Path root;

    private static Document parent;

    /** Folder to artifactId, for the modules a release publishes (the BOM itself aside). */
    private static final Map<String, String> published = new TreeMap<>();

    @BeforeAll
    static void readTheBuild() throws Exception {
        root = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (!Files.exists(root.resolve(BOM).resolve("pom.xml"))) {
            root = root.getParent();
            assertThat(root).as("the checkout's root, above " + System.getProperty("user.dir")).isNotNull();
        }
        parent = pom(root);
        for (Element module : children(child(parent.getDocumentElement(), "modules"), "module")) {
            String folder = module.getTextContent().trim();
            if (folder.equals(BOM)) {
                continue;
            }
            Element project = pom(root.resolve(folder)).getDocumentElement();
            Element properties = child(project, "properties");
            Element deploySkip = properties == null ? null : child(properties, "maven.deploy.skip");
            if (deploySkip == null || !deploySkip.getTextContent().trim().equals("true")) {
                published.put(folder, text(project, "artifactId"));
            }
        }
    }

    @Test
    void theBomListsEveryPublishedModuleAtTheBuildsVersion() throws Exception {
        assertThat(published.values()).contains("redis-lock-core", "redis-lock-annotation",
                "redis-lock-spring-boot-autoconfigure", "redis-lock-spring-boot-starter");
        Element bom = pom(root.resolve(BOM)).getDocumentElement();
        Map<String, String> managed = new TreeMap<>();
        for (Element dependency : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            assertThat(text(dependency, "groupId")).isEqualTo(GROUP);
            managed.put(text(dependency, "artifactId"), text(dependency, "version"));
        }
        assertThat(managed.keySet()).as("the BOM's dependencyManagement against the published modules")
                .containsExactlyInAnyOrderElementsOf(published.values());
        assertThat(managed.values()).containsOnly("${project.version}");
        assertThat(text(bom, "version")).as("the BOM's version, kept by hand beside the parent's")
                .isEqualTo(text(parent.getDocumentElement(), "version"));
    }

    @Test
    void theBomImportsNoOtherBomSoItPinsOnlyRedisLocksVersions() throws Exception {
        Element bom = pom(root.resolve(BOM)).getDocumentElement();
        assertThat(child(bom, "parent")).as("a parent would bring Spring Boot's BOM import along").isNull();
        for (Element dependency : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            assertThat(child(dependency, "scope")).as(text(dependency, "artifactId")).isNull();
        }
        for (String element : List.of("url", "licenses", "scm", "developers", "name", "description")) {
            assertThat(child(bom, element)).as("Maven Central wants <" + element + "> in the BOM").isNotNull();
        }
    }

    @Test
    void everyPublicTypeOfAPublishedModuleHasAJavadocComment() throws Exception {
        List<Path> sources = new ArrayList<>();
        for (String folder : published.keySet()) {
            Path main = root.resolve(folder).resolve("src/main/java");
            if (Files.isDirectory(main)) {
                try (Stream<Path> files = Files.walk(main)) {
                    files.filter(file -> file.toString().endsWith(".java")).forEach(sources::add);
                }
            }
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        List<String> undocumented = new ArrayList<>();
        List<String> documented = new ArrayList<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, null)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(sources);
            JavacTask task = (JavacTask) compiler.getTask(null, files, null, List.of("-proc:none"), null, units);
            DocTrees docs = DocTrees.instance(task);
            for (CompilationUnitTree unit : task.parse()) {
                new TreePathScanner<Void, Boolean>() {

                    @Override
                    public Void visitClass(ClassTree type, Boolean memberOfPublicInterface) {
                        Tree around = getCurrentPath().getParentPath().getLeaf();
                        boolean member = around instanceof ClassTree; // not top-level, local or anonymous
                        boolean inApi = (around instanceof CompilationUnitTree || member)
                                && (type.getModifiers().getFlags().contains(Modifier.PUBLIC)
                                        || (member && memberOfPublicInterface));
                        if (!inApi) {
                            return null; // neither this type nor its member types are in the Javadoc
                        }
                        String name = root.relativize(Path.of(unit.getSourceFile().toUri())) + ": " + type.getSimpleName();
                        (docs.getDocCommentTree(getCurrentPath()) == null ? undocumented : documented).add(name);
                        return super.visitClass(type, type.getKind() == Tree.Kind.INTERFACE
                                || type.getKind() == Tree.Kind.ANNOTATION_TYPE);
                    }
                }.scan(unit, false);
            }
        }
        assertThat(documented).as("public types found").hasSizeGreaterThan(20);
        assertThat(undocumented).as("public types without a Javadoc comment").isEmpty();
    }

    private static Document pom(Path folder) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(folder.resolve("pom.xml").toFile());
    }

    private static Element child(Element element, String name) {
        for (Element child : children(element, name)) {
            return child;
        }
        return null;
    }

    private static List<Element> children(Element element, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = element.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node node = nodes.item(i);
            if (node instanceof Element child && child.getTagName().equals(name)) {
                found.add(child);
            }
        }
        return found;
    }

    private static String text(Element element, String name) {
        Element child = child(element, name);
        return child == null ? null : child.getTextContent().trim();
    }
}
