package io.github.redislock.testing;

import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * {@link WithRedisServer}'s Spring side (registered in {@code META-INF/spring.factories}): the context of a test
 * class with the annotation gets {@code spring.data.redis.host}, {@code port} and {@code url} of the shared {@link TestRedisServer}
 * as its first property source, and the server as a bean.
 */
public final class RedisServerContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public ContextCustomizer createContextCustomizer(Class<?> testClass, List<ContextConfigurationAttributes> configAttributes) {
        return TestContextAnnotationUtils.hasAnnotation(testClass, WithRedisServer.class) ? new RedisServerCustomizer() : null;
    }

    /** All equal: every annotated class uses the one shared server, so their contexts may be cached and shared. */
    private static final class RedisServerCustomizer implements ContextCustomizer {

        static final String PROPERTY_SOURCE = "redisLockTestRedisServer";

        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
            TestRedisServer server = TestRedisServer.shared();
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, Map.of(
                    "spring.data.redis.host", server.host(), "spring.data.redis.port", server.port(),
                    // the URL, when an application sets one, wins over host and port: it must point here too
                    "spring.data.redis.url", server.url())));
            ConfigurableListableBeanFactory beans = context.getBeanFactory();
            beans.registerSingleton("testRedisServer", server);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof RedisServerCustomizer;
        }

        @Override
        public int hashCode() {
            return RedisServerCustomizer.class.hashCode();
        }
    }
}
