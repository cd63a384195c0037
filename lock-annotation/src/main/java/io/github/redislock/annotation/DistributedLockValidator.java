package io.github.redislock.annotation;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.autoproxy.AbstractAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks every {@link DistributedLock} method of every bean once all singletons exist, with the
 * {@code LockOperations} bean it locks on, so a broken annotation or a backend that cannot serve it stops the
 * application at start-up instead of failing at the first call; warns about annotated methods a proxy cannot
 * intercept.
 */
public final class DistributedLockValidator implements SmartInitializingSingleton {

    private static final Logger log = LoggerFactory.getLogger(DistributedLockValidator.class);

    private final ConfigurableListableBeanFactory beanFactory;
    private final DistributedLockAdvisor advisor;

    public DistributedLockValidator(ConfigurableListableBeanFactory beanFactory, DistributedLockAdvisor advisor) {
        this.beanFactory = beanFactory;
        this.advisor = advisor;
    }

    @Override
    public void afterSingletonsInstantiated() {
        boolean found = false;
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> userClass = userClass(name);
            if (userClass == null || userClass.getName().startsWith("org.springframework.")) {
                continue;
            }
            found |= check(name, userClass);
        }
        if (found && beanFactory.getBeanNamesForType(AbstractAdvisorAutoProxyCreator.class, true, false).length == 0) {
            log.warn("@DistributedLock methods found, but no auto-proxy creator is registered, so none of them is locked. "
                    + "Keep Spring Boot's AOP auto-configuration on (spring.aop.auto=true, the default) or use "
                    + "@EnableAspectJAutoProxy.");
        }
    }

    /** The class whose methods a bean runs: the target class behind a proxy, the product of a factory bean. */
    private @Nullable Class<?> userClass(String beanName) {
        try {
            Object singleton = beanFactory.containsSingleton(beanName) ? beanFactory.getSingleton(beanName) : null;
            if (singleton != null && !(singleton instanceof FactoryBean<?>)) {
                return AopProxyUtils.ultimateTargetClass(singleton);
            }
            Class<?> type = beanFactory.getType(beanName, false);
            return type == null ? null : ClassUtils.getUserClass(type);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** @return whether the class has a {@link DistributedLock} method */
    private boolean check(String beanName, Class<?> userClass) {
        boolean[] found = {false};
        boolean classAnnotated = AnnotatedElementUtils.hasAnnotation(userClass, DistributedLock.class);
        ReflectionUtils.doWithMethods(userClass, method -> {
            int modifiers = method.getModifiers();
            boolean annotatedItself = AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class);
            boolean unreachable = Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers) || Modifier.isFinal(modifiers);
            if (unreachable && (annotatedItself || classAnnotated && Modifier.isPublic(modifiers) && !Modifier.isStatic(modifiers))) {
                log.warn("@DistributedLock on {} has no effect: a proxy cannot intercept a {} method. Make it public, "
                        + "non-static and non-final, and call it through the bean.",
                        DistributedLockOperation.describe(method, userClass),
                        Modifier.isPrivate(modifiers) ? "private" : Modifier.isStatic(modifiers) ? "static" : "final");
                return;
            }
            if (unreachable || DistributedLockOperationSource.annotation(method, userClass) == null) {
                return;
            }
            found[0] = true;
            Method invocable = AopUtils.selectInvocableMethod(method, userClass);
            try {
                advisor.validate(invocable, userClass);
            } catch (IllegalStateException e) {
                throw new BeanCreationException(beanName, e.getMessage(), e);
            }
        }, method -> method.getDeclaringClass() != Object.class && !method.isBridge() && !method.isSynthetic());
        return found[0];
    }
}
