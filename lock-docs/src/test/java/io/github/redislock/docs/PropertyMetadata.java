package io.github.redislock.docs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.boot.configurationmetadata.ConfigurationMetadataGroup;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataProperty;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataRepository;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataRepositoryJsonBuilder;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataSource;

/**
 * The Spring Boot configuration metadata on the test classpath, as an IDE reads it: every jar's
 * {@code META-INF/spring-configuration-metadata.json} (which the configuration processor writes, merged with the
 * module's additional metadata) and, for the names only, the {@code additional-spring-configuration-metadata.json}
 * files too.
 */
final class PropertyMetadata {

    private final ConfigurationMetadataRepository repository;

    private PropertyMetadata(ConfigurationMetadataRepository repository) {
        this.repository = repository;
    }

    /** Every property a YAML block may set. */
    static PropertyMetadata all() {
        return load(List.of("META-INF/spring-configuration-metadata.json",
                "META-INF/additional-spring-configuration-metadata.json"));
    }

    /** The generated metadata only: types, defaults and descriptions as the configuration processor wrote them. */
    static PropertyMetadata generated() {
        return load(List.of("META-INF/spring-configuration-metadata.json"));
    }

    private static PropertyMetadata load(List<String> resources) {
        ConfigurationMetadataRepositoryJsonBuilder builder = ConfigurationMetadataRepositoryJsonBuilder.create();
        try {
            for (String resource : resources) {
                for (URL url : Collections.list(PropertyMetadata.class.getClassLoader().getResources(resource))) {
                    try (InputStream json = url.openStream()) {
                        builder.withJsonResource(json);
                    }
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return new PropertyMetadata(builder.build());
    }

    /** The properties whose names start with {@code prefix}, by name. */
    Map<String, ConfigurationMetadataProperty> properties(String prefix) {
        Map<String, ConfigurationMetadataProperty> properties = new TreeMap<>();
        repository.getAllProperties().forEach((name, property) -> {
            if (name.startsWith(prefix)) {
                properties.put(name, property);
            }
        });
        return properties;
    }

    /**
     * Whether a property name, as a YAML block flattens it ({@code redis-lock.replicaAck.replicas},
     * {@code spring.data.redis.cluster.nodes[0]}), is known: compared in kebab case, list indexes dropped, and any
     * sub-key of a Map-typed property accepted.
     */
    boolean isKnown(String name) {
        String kebab = kebab(name);
        if (repository.getAllProperties().containsKey(kebab)) {
            return true;
        }
        return repository.getAllProperties().values().stream()
                .anyMatch(property -> property.getType() != null && property.getType().startsWith("java.util.Map<")
                        && kebab.startsWith(property.getId() + "."));
    }

    /**
     * The {@code @ConfigurationProperties} classes bound at {@code prefix} or below it, by the name they bind at
     * (the groups with no source method: {@code redis-lock} to RedisLockProperties, {@code redis-lock.redlock} to
     * RedlockProperties).
     */
    Map<String, String> propertiesClasses(String prefix) {
        Map<String, String> classes = new TreeMap<>();
        for (ConfigurationMetadataGroup group : repository.getAllGroups().values()) {
            if (!group.getId().equals(prefix) && !group.getId().startsWith(prefix + ".")) {
                continue;
            }
            for (ConfigurationMetadataSource source : group.getSources().values()) {
                if (source.getSourceMethod() == null && source.getType() != null) {
                    classes.put(group.getId(), source.getType());
                }
            }
        }
        return classes;
    }

    /** {@code redis_lock.replicaAck[0].fooBar} as {@code redis-lock.replica-ack.foo-bar}. */
    static String kebab(String name) {
        return name.replaceAll("\\[[^\\]]*\\]", "")
                .replaceAll("([a-z0-9])([A-Z])", "$1-$2")
                .replace('_', '-')
                .toLowerCase(Locale.ROOT);
    }
}
