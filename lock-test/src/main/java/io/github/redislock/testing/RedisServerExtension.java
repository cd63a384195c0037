package io.github.redislock.testing;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;

/**
 * {@link WithRedisServer}'s JUnit side: sets the test class's {@link TestRedisServer} fields (static ones before
 * {@code @BeforeAll}, instance ones before each test) and resolves {@link TestRedisServer} parameters.
 */
public final class RedisServerExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {

    @Override
    public void beforeAll(ExtensionContext context) {
        inject(context.getRequiredTestClass(), null);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
            inject(instance.getClass(), instance);
        }
    }

    private static void inject(Class<?> testClass, Object instance) {
        for (Field field : ReflectionSupport.findFields(testClass, field -> field.getType() == TestRedisServer.class
                && Modifier.isStatic(field.getModifiers()) == (instance == null) && !Modifier.isFinal(field.getModifiers()),
                HierarchyTraversalMode.TOP_DOWN)) {
            try {
                field.setAccessible(true);
                field.set(instance, TestRedisServer.shared());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("Cannot set " + field, e);
            }
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == TestRedisServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return TestRedisServer.shared();
    }
}
