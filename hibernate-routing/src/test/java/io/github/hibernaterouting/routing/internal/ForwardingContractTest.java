package io.github.hibernaterouting.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.hibernate.event.monitor.spi.EventMonitor;
import org.junit.jupiter.api.Test;

/**
 * The forwarding base classes are generated from their interfaces; this checks that they still
 * cover them, so that a new method in a JDBC or Hibernate release is not silently left to a
 * default (or, for an abstract method, to an {@code AbstractMethodError} at run time).
 */
class ForwardingContractTest {
    private static List<String> missing(Class<?> base, Class<?> contract, boolean includeDefaults) {
        final List<String> missing = new ArrayList<>();
        for (Method method : contract.getMethods()) {
            if (Modifier.isStatic(method.getModifiers()) || method.isDefault() && !includeDefaults) {
                continue;
            }
            try {
                final Method declared = base.getDeclaredMethod(method.getName(), method.getParameterTypes());
                if (Modifier.isAbstract(declared.getModifiers())) {
                    missing.add(method.toString());
                }
            } catch (NoSuchMethodException e) {
                missing.add(method.toString());
            }
        }
        return missing;
    }

    private static Class<?> base(String name) throws ClassNotFoundException {
        return Class.forName("io.github.hibernaterouting.routing.internal." + name);
    }

    @Test
    void forwardingConnection_declaresEveryAbstractMethodOfConnection() throws Exception {
        assertThat(missing(base("jdbc.ForwardingConnection"), Connection.class, false))
                .isEmpty();
    }

    @Test
    void forwardingPreparedStatement_declaresEveryMethodOfPreparedStatement_defaultsIncluded() throws Exception {
        assertThat(missing(base("jdbc.ForwardingPreparedStatement"), PreparedStatement.class, true))
                .isEmpty();
    }

    @Test
    void forwardingEventMonitor_declaresEveryMethodOfEventMonitor() throws Exception {
        assertThat(missing(base("bootstrap.ForwardingEventMonitor"), EventMonitor.class, true))
                .isEmpty();
    }

    @Test
    void aMissingMethod_wouldBeFound() throws Exception {
        abstract class Partial implements Connection {
            @Override
            public void close() {}
        }
        assertThat(missing(Partial.class, Connection.class, false))
                .hasSizeGreaterThan(40)
                .noneMatch(method -> method.contains(".close()"));
        assertThat(Arrays.stream(Partial.class.getDeclaredMethods()).map(Method::getName))
                .contains("close");
    }
}
