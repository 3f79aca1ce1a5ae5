package io.github.hibernaterouting.routing.it;

import java.lang.reflect.Proxy;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.naming.CompositeName;
import javax.naming.Context;
import javax.naming.Name;
import javax.naming.NameNotFoundException;
import javax.naming.NameParser;
import javax.naming.spi.InitialContextFactory;

/**
 * A JNDI of the test's own, for Hibernate's JNDI service ({@code hibernate.jndi.class}): names bound
 * with {@link #bind} are looked up as an application server would look up its data sources.
 */
public final class MapJndi implements InitialContextFactory {
    private static final Map<String, Object> BOUND = new ConcurrentHashMap<>();

    /** Binds {@code value} under {@code name} until {@link #unbind}. */
    public static void bind(String name, Object value) {
        BOUND.put(name, value);
    }

    public static void unbind(String name) {
        BOUND.remove(name);
    }

    @Override
    public Context getInitialContext(Hashtable<?, ?> environment) {
        final NameParser parser = CompositeName::new;
        return (Context) Proxy.newProxyInstance(
                MapJndi.class.getClassLoader(), new Class<?>[] {Context.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getNameParser":
                            return parser;
                        case "lookup":
                            final String name = args[0] instanceof Name n ? n.toString() : (String) args[0];
                            final Object value = BOUND.get(name);
                            if (value == null) {
                                throw new NameNotFoundException(name + " is not bound");
                            }
                            return value;
                        case "close":
                            return null;
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
    }
}
