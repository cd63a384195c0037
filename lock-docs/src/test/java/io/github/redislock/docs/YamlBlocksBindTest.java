package io.github.redislock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginLookup;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.origin.TextResourceOrigin;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.util.ClassUtils;
import org.yaml.snakeyaml.error.MarkedYAMLException;

import io.github.redislock.docs.MarkdownPages.CodeBlock;

/**
 * Every ```yaml block of README.md, CONTRIBUTING.md and docs/ parses as Spring Boot reads application.yml, every key
 * it sets is a property known to the configuration metadata on the classpath, and its {@code redis-lock} keys bind to
 * the project's properties classes with no key left unbound and no value that fails to convert.
 */
class YamlBlocksBindTest {

    private static final String PREFIX = "redis-lock";

    @Test
    void everyYamlBlockSetsKnownPropertiesThatBind() {
        List<String> problems = problems(MarkdownPages.root());
        assertThat(problems).withFailMessage(() -> problems.size() + " problem(s) in ```yaml blocks:\n"
                + String.join("\n", problems)).isEmpty();
    }

    static List<String> problems(Path docsRoot) {
        Path root = docsRoot.toAbsolutePath().normalize();
        PropertyMetadata metadata = PropertyMetadata.all();
        Map<String, String> propertiesClasses = metadata.propertiesClasses(PREFIX);
        assertThat(propertiesClasses).as("@ConfigurationProperties classes under " + PREFIX + " in the metadata")
                .containsKey(PREFIX);
        List<String> problems = new ArrayList<>();
        for (Path page : MarkdownPages.pages(root)) {
            for (CodeBlock block : MarkdownPages.codeBlocks(page, "yaml", "yml")) {
                List<PropertySource<?>> sources;
                try {
                    byte[] yaml = String.join("\n", block.body()).getBytes(StandardCharsets.UTF_8);
                    sources = new YamlPropertySourceLoader().load(block.where(root), new ByteArrayResource(yaml));
                }
                catch (Exception ex) {
                    problems.add(parseProblem(root, block, ex));
                    continue;
                }
                for (PropertySource<?> source : sources) {
                    for (String name : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
                        if (!metadata.isKnown(name)) {
                            problems.add(at(root, block, OriginLookup.getOrigin(source, name))
                                    + ": unknown property '" + name + "' (not in any spring-configuration-metadata.json)");
                        }
                    }
                }
                problems.addAll(bindProblems(root, block, sources, propertiesClasses));
            }
        }
        return problems;
    }

    /**
     * Binds each properties class at its name to the block's keys under it (RedisLockProperties gets redis-lock.*
     * but for redis-lock.redlock.*, which RedlockProperties gets), failing on a key it has no property for.
     */
    private static List<String> bindProblems(Path root, CodeBlock block, List<PropertySource<?>> sources,
            Map<String, String> propertiesClasses) {
        List<String> problems = new ArrayList<>();
        List<String> names = propertiesClasses.keySet().stream().sorted(Comparator.comparing(String::length).reversed()).toList();
        for (String name : names) {
            ConfigurationPropertyName bound = ConfigurationPropertyName.of(name);
            List<ConfigurationPropertyName> deeper = names.stream().filter(other -> other.startsWith(name + "."))
                    .map(ConfigurationPropertyName::of).toList();
            List<ConfigurationPropertySource> own = new ArrayList<>();
            ConfigurationPropertySources.from(sources).forEach(source -> own.add(source.filter(key ->
                    (bound.equals(key) || bound.isAncestorOf(key)) && deeper.stream().noneMatch(d -> d.equals(key) || d.isAncestorOf(key)))));
            Binder binder = new Binder(own, new PropertySourcesPlaceholdersResolver(sources),
                    ApplicationConversionService.getSharedInstance());
            try {
                Class<?> type = ClassUtils.forName(propertiesClasses.get(name), YamlBlocksBindTest.class.getClassLoader());
                binder.bind(name, Bindable.of(type), new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
            }
            catch (BindException ex) {
                if (ex.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
                    for (ConfigurationProperty property : unbound.getUnboundProperties()) {
                        problems.add(at(root, block, property.getOrigin()) + ": '" + property.getName()
                                + "' is not a property of " + ClassUtils.getShortName(propertiesClasses.get(name)));
                    }
                }
                else {
                    Throwable cause = ex;
                    while (cause.getCause() != null) {
                        cause = cause.getCause();
                    }
                    Origin origin = own.stream().map(source -> source.getConfigurationProperty(ex.getName()))
                            .filter(Objects::nonNull).map(ConfigurationProperty::getOrigin).findFirst().orElse(ex.getOrigin());
                    problems.add(at(root, block, origin) + ": '" + ex.getName() + "' does not bind to "
                            + ex.getTarget().getType() + ": " + cause.getMessage());
                }
            }
            catch (ClassNotFoundException ex) {
                throw new IllegalStateException(ex);
            }
        }
        return problems;
    }

    /** Where SnakeYAML stopped, and why. */
    private static String parseProblem(Path root, CodeBlock block, Exception ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof MarkedYAMLException marked && marked.getProblemMark() != null) {
                return root.relativize(block.file()) + ":" + (block.line() + 1 + marked.getProblemMark().getLine())
                        + ": does not parse as YAML: " + marked.getProblem()
                        + (marked.getContext() == null ? "" : " (" + marked.getContext() + ")");
            }
        }
        return block.where(root) + ": does not parse as YAML: " + ex;
    }

    /** The page and line of a key: the fence's line plus the key's line in the block. */
    private static String at(Path root, CodeBlock block, Origin origin) {
        while (origin != null) {
            if (origin instanceof TextResourceOrigin text && text.getLocation() != null) {
                return root.relativize(block.file()) + ":" + (block.line() + 1 + text.getLocation().getLine());
            }
            origin = origin instanceof PropertySourceOrigin wrapper ? wrapper.getOrigin() : origin.getParent();
        }
        return block.where(root);
    }
}
