package io.github.redislock.annotation;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;
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
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypedValue;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.DataBindingMethodResolver;
import org.springframework.expression.spel.support.DataBindingPropertyAccessor;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.expression.spel.support.StandardTypeConverter;

/**
 * Parses and evaluates key expressions in a restricted context: arguments, their properties and
 * instance methods, and the call's {@code #root}; no type references, no constructors, no static
 * methods, no assignment, increment or decrement, no properties of classes, not the target bean,
 * and bean references only when allowed.
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
        public @Nullable MethodExecutor resolve(EvaluationContext context, Object target, String name,
                List<TypeDescriptor> argumentTypes)
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
        public Class<?> @Nullable [] getSpecificTargetClasses() {
            return null;
        }

        @Override
        public boolean canRead(EvaluationContext context, @Nullable Object target, String name) throws AccessException {
            refuseClass(target, name);
            return properties.canRead(context, target, name);
        }

        @Override
        public TypedValue read(EvaluationContext context, @Nullable Object target, String name) throws AccessException {
            refuseClass(target, name); // SpEL calls read() again without canRead() once it has cached this accessor
            return properties.read(context, target, name);
        }

        @Override
        public boolean canWrite(EvaluationContext context, @Nullable Object target, String name) {
            return false;
        }

        @Override
        public void write(EvaluationContext context, @Nullable Object target, String name, @Nullable Object newValue)
                throws AccessException {
            throw new AccessException("lock keys cannot write properties");
        }

        private void refuseClass(@Nullable Object target, String name) throws AccessException {
            if (target instanceof Class<?> type) {
                throw new AccessException("lock keys cannot read properties of a class (" + type.getName() + "." + name
                        + "): that reads its static state");
            }
        }
    };

    /**
     * Writes values into text the way a whole key is written ({@link LockKeyValues}), so
     * {@code 'ids:' + #ids} is written by content and {@code 'order:' + #customer} is refused when the
     * customer has no text of its own, as {@code #customer} alone is.
     */
    private static final TypeConverter KEY_TEXT = new StandardTypeConverter() {

        @Override
        public boolean canConvert(@Nullable TypeDescriptor sourceType, TypeDescriptor targetType) {
            return isToText(sourceType, targetType) || super.canConvert(sourceType, targetType);
        }

        @Override
        public @Nullable Object convertValue(@Nullable Object value, @Nullable TypeDescriptor sourceType,
                TypeDescriptor targetType) {
            if (value != null && isToText(sourceType, targetType) && !(value instanceof CharSequence)) {
                return LockKeyValues.render(value);
            }
            return super.convertValue(value, sourceType, targetType);
        }

        private static boolean isToText(@Nullable TypeDescriptor sourceType, @Nullable TypeDescriptor targetType) {
            return targetType != null && targetType.getType() == String.class;
        }
    };

    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final @Nullable BeanFactory beanFactory;

    /** @param beanFactory resolves {@code @bean} references; {@code null} refuses them */
    LockKeyExpressions(@Nullable BeanFactory beanFactory) {
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
        refuseTarget(parsed.getAST(), true, expression, where);
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

    /**
     * Refuses {@code #root.target} (and {@code target}, {@code #root.getTarget()}): the bean's text
     * differs per JVM, so the lock would exclude only within one, and through it a key reaches other
     * beans. The root offers no target, so forms not seen here fail when evaluated.
     *
     * @param onRoot whether the node is evaluated against the root object
     */
    private void refuseTarget(SpelNode node, boolean onRoot, String expression, String where) {
        if (onRoot && isTarget(node)) {
            throw new IllegalStateException(where + ": key expression \"" + expression + "\" reads #root.target, the bean "
                    + "the method runs on, which lock keys do not allow: its text differs in every JVM, so the lock would "
                    + "not exclude across them, and through it a key reaches other beans; key on the arguments, or use "
                    + "#root.targetClass or #root.className for the class");
        }
        boolean filter = node instanceof Selection || node instanceof Projection;
        for (int i = 0; i < node.getChildCount(); i++) {
            SpelNode child = node.getChild(i);
            boolean childOnRoot;
            if (node instanceof CompoundExpression) {
                childOnRoot = i == 0 ? onRoot : isRootVariable(node.getChild(i - 1));
            } else {
                childOnRoot = !filter; // operands and arguments are evaluated against the root; filters against elements
            }
            refuseTarget(child, childOnRoot, expression, where);
        }
    }

    private static boolean isTarget(SpelNode node) {
        return node instanceof PropertyOrFieldReference property && property.getName().equals("target")
                || node instanceof MethodReference method && (method.getName().equals("getTarget") || method.getName().equals("target"));
    }

    private static boolean isRootVariable(SpelNode node) {
        return node instanceof VariableReference && node.toStringAST().equals("#root");
    }

    /**
     * The declared type of the parameter when the whole expression is one ({@code #p0}, {@code #a0},
     * {@code #name}), else {@code null}.
     */
    @Nullable Class<?> bareParameterType(Expression expression, Method method) {
        if (!(expression instanceof SpelExpression spel) || !(spel.getAST() instanceof VariableReference variable)) {
            return null;
        }
        String name = variable.toStringAST().substring(1);
        String[] names = parameterNames.getParameterNames(method);
        Class<?>[] types = method.getParameterTypes();
        for (int i = types.length - 1; i >= 0; i--) { // as evaluate() binds them: a parameter's name wins over #p<i>
            if (names != null && i < names.length && names[i].equals(name)) {
                return types[i];
            }
        }
        for (int i = 0; i < types.length; i++) {
            if (name.equals("p" + i) || name.equals("a" + i)) {
                return types[i];
            }
        }
        return null;
    }

    @Nullable Object evaluate(Expression expression, Method method, @Nullable Object[] args, Class<?> targetClass) {
        StandardEvaluationContext context = new StandardEvaluationContext(new LockKeyRoot(method, args, targetClass));
        context.setPropertyAccessors(List.of(PROPERTIES_EXCEPT_OF_CLASSES));
        context.setMethodResolvers(List.of(INSTANCE_METHODS_WITHOUT_REFLECTION));
        context.setConstructorResolvers(List.of());
        context.setTypeConverter(KEY_TEXT);
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
        } catch (LockKeyValues.WithoutText e) { // from KEY_TEXT, joining a value into text
            throw new IllegalArgumentException("key expression \"" + expression.getExpressionString() + "\" joins into text "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            // also what methods called by the expression throw, say a NullPointerException
            throw new IllegalArgumentException("key expression \"" + expression.getExpressionString() + "\" failed: "
                    + e, e);
        }
    }

    /** What {@code #root} offers in a key expression: not the target bean (see {@link #refuseTarget}). */
    public record LockKeyRoot(Method method, @Nullable Object[] args, Class<?> targetClass) {

        public String getMethodName() {
            return method.getName();
        }

        public Method getMethod() {
            return method;
        }

        public Object[] getArgs() {
            return args;
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
