package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.expression.Expression;

/** Key expressions are evaluated over the call only: no types, no constructors, no reflection, beans when allowed. */
class LockKeyExpressionsTest {

    private final LockKeyExpressions expressions = new LockKeyExpressions(null);

    record Customer(String name) {
    }

    record Order(long id, Customer customer) {
        public long getId() {
            return id;
        }
    }

    static class Payments {

        public static final String ZONE = "eu-1";

        static final AtomicInteger zoneReads = new AtomicInteger();

        public static String getZone() {
            zoneReads.incrementAndGet();
            return ZONE;
        }

        public void pay(Order order, String region) {
        }
    }

    private Object evaluate(LockKeyExpressions expressions, String expression, Object... args) throws Exception {
        Method pay = Payments.class.getMethod("pay", Order.class, String.class);
        Expression parsed = expressions.parse(expression, "Payments.pay");
        return expressions.evaluate(parsed, pay, args, Payments.class);
    }

    @Test
    void readsArgumentsByNameAndPositionTheirPropertiesAndMethodsAndTheCall() throws Exception {
        Object[] args = {new Order(42, new Customer("ann")), "eu"};
        assertThat(evaluate(expressions, "'order:' + #order.id", args)).isEqualTo("order:42");
        assertThat(evaluate(expressions, "#order.customer().name() + ':' + #region", args)).isEqualTo("ann:eu");
        assertThat(evaluate(expressions, "#p1 + #a1", args)).isEqualTo("eueu");
        assertThat(evaluate(expressions, "#order.customer.name", args)).as("record components read as properties").isEqualTo("ann");
        assertThat(evaluate(expressions, "#root.methodName + ':' + #root.className + ':' + #root.args[1]", args))
                .isEqualTo("pay:Payments:eu");
        assertThat(evaluate(expressions, "#root.targetClass", args)).isEqualTo(Payments.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"T(java.lang.Runtime).getRuntime().exec('id')", "T(String).valueOf(1)",
            "new java.io.File('x')", "new String('x')", "@environment.getProperty('x')"})
    void typesConstructorsAndBeansAreRefusedWhenParsed(String expression) {
        assertThatIllegalStateException().isThrownBy(() -> expressions.parse(expression, "Payments.pay(Order, String)"))
                .withMessageContaining("Payments.pay(Order, String)").withMessageContaining(expression);
    }

    @ParameterizedTest
    @ValueSource(strings = {"#root.args[0] = 'x'", "#x = 1", "#region = 'us'", "#order.customer.name = 'eve'", "#x++",
            "--#x", "#root.args[1]--", "++#order.id", "'k:' + (#n = 2)"})
    void assignmentIncrementAndDecrementAreRefusedWhenParsed(String expression) {
        assertThatIllegalStateException().isThrownBy(() -> expressions.parse(expression, "Payments.pay(Order, String)"))
                .withMessageContaining("Payments.pay(Order, String)").withMessageContaining("\"" + expression + "\"")
                .withMessageContaining("a key must not change the method's arguments");
    }

    @Test
    void theTargetBeanIsRefusedWhenParsedButAnArgumentsPropertyNamedTargetIsNot() {
        for (String expression : List.of("#root.target", "target", "#root.getTarget()", "'x:' + #root.target.toString()",
                "#root.args[0].customer(#root.target)", "#root.target.class.name")) {
            assertThatIllegalStateException().isThrownBy(() -> expressions.parse(expression, "Payments.pay(Order, String)"))
                    .withMessageContaining("Payments.pay(Order, String)").withMessageContaining("\"" + expression + "\"")
                    .withMessageContaining("reads #root.target");
        }
        for (String expression : List.of("#order.target", "#root.args.?[#this.target != null]", "#root.args[0].customer.target")) {
            assertThatNoException().as(expression).isThrownBy(() -> expressions.parse(expression, "Payments.pay(Order, String)"));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"#root.targetClass.zone", "#root.targetClass.ZONE"})
    void propertiesOfAClassAreRefusedWhenEvaluated(String expression) {
        Payments.zoneReads.set(0);
        assertThatIllegalArgumentException().isThrownBy(() -> evaluate(expressions, expression, new Order(1, null), "eu"))
                .withMessageContaining(expression).withMessageContaining("cannot read properties of a class");
        assertThat(Payments.zoneReads).as("no static getter ran").hasValue(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"#p1.getClass().forName('java.lang.Runtime')", "#root.targetClass.classLoader",
            "#root.targetClass.getClassLoader()", "#root.method.invoke(null)", "#p1.class.name"})
    void reflectionThroughArgumentsIsRefusedWhenEvaluated(String expression) {
        assertThatIllegalArgumentException().isThrownBy(() -> evaluate(expressions, expression, new Order(1, null), "eu"))
                .withMessageContaining(expression);
    }

    @Test
    void beanReferencesResolveWhenAllowed() throws Exception {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerSingleton("tenant", new Customer("acme"));
        assertThat(evaluate(new LockKeyExpressions(beans), "@tenant.name() + ':' + #region", new Order(1, null), "eu"))
                .isEqualTo("acme:eu");
    }
}
