package io.github.redislock.annotation;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;
import java.util.List;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.MethodExecutor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypedValue;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.DataBindingMethodResolver;
import org.springframework.expression.spel.support.DataBindingPropertyAccessor;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * Parses and evaluates key expressions in a restricted context: arguments, their properties and
 * instance methods, and the call's {@code #root}; no type references, no constructors, no static
 * methods, no assignment, increment or decrement, no properties of classes, and bean references
 * only when allowed.
 */
final class LockKeyExpressions {

    /**
     * Instance methods of arguments, but none on reflective objects ({@code #root.method.invoke(...)},
     * {@code #p0.getClass()...}) or on threads and class loaders: a key expression cannot reach
     * code it was not given.
     */
    private static final MethodResolver INSTANCE_METHODS_WITHOUT_REFLECTION = new MethodResolver() {

        private final MethodResolver instanceMethods = DataBindingMethodResolver.forInstanceMethodInvocation();

        @Override
        public MethodExecutor resolve(EvaluationContext context, Object target, String name, List<TypeDescriptor> argumentTypes)
                throws AccessException {
            if (target instanceof Class<?> || target instanceof ClassLoader || target instanceof AccessibleObject
                    || target instanceof Thread || target instanceof Runtime || target instanceof ProcessBuilder
                    || target.getClass().getName().startsWith("java.lang.invoke.")) {
                throw new AccessException("lock keys cannot call methods of " + target.getClass().getName());
            }
            return instanceMethods.resolve(context, target, name, argumentTypes);
        }
    };

    /**
     * Properties of arguments, read only, but none of a {@code Class}: for a class, SpEL reads its
     * static getters and fields ({@code #root.targetClass.instance}), code a key was not given.
     */
    private static final PropertyAccessor PROPERTIES_EXCEPT_OF_CLASSES = new PropertyAccessor() {

        private final PropertyAccessor properties = DataBindingPropertyAccessor.forReadOnlyAccess();

        @Override
        public Class<?>[] getSpecificTargetClasses() {
            return null;
        }

        @Override
        public boolean canRead(EvaluationContext context, Object target, String name) throws AccessException {
            refuseClass(target, name);
            return properties.canRead(context, target, name);
        }

        @Override
        public TypedValue read(EvaluationContext context, Object target, String name) throws AccessException {
            refuseClass(target, name); // SpEL calls read() again without canRead() once it has cached this accessor
            return properties.read(context, target, name);
        }

        @Override
        public boolean canWrite(EvaluationContext context, Object target, String name) {
            return false;
        }

        @Override
        public void write(EvaluationContext context, Object target, String name, Object newValue) throws AccessException {
            throw new AccessException("lock keys cannot write properties");
        }

        private void refuseClass(Object target, String name) throws AccessException {
            if (target instanceof Class<?> type) {
                throw new AccessException("lock keys cannot read properties of a class (" + type.getName() + "." + name
                        + "): that reads its static state");
            }
        }
    };

    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final BeanFactory beanFactory;

    /** @param beanFactory resolves {@code @bean} references; {@code null} refuses them */
    LockKeyExpressions(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /** Parses and checks one expression; {@code where} names the method for the message. */
    Expression parse(String expression, String where) {
        SpelExpression parsed;
        try {
            parsed = (SpelExpression) parser.parseExpression(expression);
        } catch (ParseException e) {
            throw new IllegalStateException(where + ": key expression \"" + expression + "\" does not parse: " + e.getMessage(), e);
        }
        refuseUnsafe(parsed.getAST(), expression, where);
        return parsed;
    }

    private void refuseUnsafe(SpelNode node, String expression, String where) {
        if (node instanceof Assign) {
            throw new IllegalStateException(where + ": key expression \"" + expression
                    + "\" assigns a value (=), which lock keys do not allow: a key must not change the method's arguments");
        }
        if (node instanceof OpInc || node instanceof OpDec) {
            throw new IllegalStateException(where + ": key expression \"" + expression + "\" "
                    + (node instanceof OpInc ? "increments (++)" : "decrements (--)")
                    + " a value, which lock keys do not allow: a key must not change the method's arguments");
        }
        if (node instanceof TypeReference) {
            throw new IllegalStateException(where + ": key expression \"" + expression
                    + "\" uses a type reference T(...), which lock keys do not allow");
        }
        if (node instanceof ConstructorReference) {
            throw new IllegalStateException(where + ": key expression \"" + expression
                    + "\" calls a constructor, which lock keys do not allow");
        }
        if (node instanceof BeanReference && beanFactory == null) {
            throw new IllegalStateException(where + ": key expression \"" + expression
                    + "\" references a bean; set redis-lock.allow-bean-references=true to allow that");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            refuseUnsafe(node.getChild(i), expression, where);
        }
    }

    Object evaluate(Expression expression, Method method, Object[] args, Object target, Class<?> targetClass) {
        StandardEvaluationContext context = new StandardEvaluationContext(new LockKeyRoot(method, args, target, targetClass));
        context.setPropertyAccessors(List.of(PROPERTIES_EXCEPT_OF_CLASSES));
        context.setMethodResolvers(List.of(INSTANCE_METHODS_WITHOUT_REFLECTION));
        context.setConstructorResolvers(List.of());
        context.setTypeLocator(typeName -> {
            throw new IllegalStateException("type references are not allowed in lock keys: " + typeName);
        });
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        String[] names = parameterNames.getParameterNames(method);
        for (int i = 0; i < args.length; i++) {
            context.setVariable("p" + i, args[i]);
            context.setVariable("a" + i, args[i]);
            if (names != null && i < names.length) {
                context.setVariable(names[i], args[i]);
            }
        }
        try {
            return expression.getValue(context);
        } catch (RuntimeException e) {
            // also what methods called by the expression throw, say a NullPointerException
            throw new IllegalArgumentException("key expression \"" + expression.getExpressionString() + "\" failed: "
                    + e, e);
        }
    }

    /** What {@code #root} offers in a key expression. */
    public record LockKeyRoot(Method method, Object[] args, Object target, Class<?> targetClass) {

        public String getMethodName() {
            return method.getName();
        }

        public Method getMethod() {
            return method;
        }

        public Object[] getArgs() {
            return args;
        }

        public Object getTarget() {
            return target;
        }

        public Class<?> getTargetClass() {
            return targetClass;
        }

        /** The target class's simple name ({@code #root.targetClass.simpleName} does not resolve in SpEL). */
        public String getClassName() {
            return targetClass.getSimpleName();
        }
    }
}
