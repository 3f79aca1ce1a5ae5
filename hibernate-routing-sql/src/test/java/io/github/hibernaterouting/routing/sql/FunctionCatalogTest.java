package io.github.hibernaterouting.routing.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.sql.FunctionCatalog.Volatility;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

class FunctionCatalogTest {

    /** A Connection whose one query returns {@code rows} of (schema, name, 1|2|3, callable with one argument). */
    private static Connection connectionReturning(List<Object[]> rows) {
        int[] cursor = {-1};
        ResultSet rs = (ResultSet) Proxy.newProxyInstance(
                ResultSet.class.getClassLoader(), new Class<?>[] {ResultSet.class}, (p, m, a) -> switch (m.getName()) {
                    case "next" -> ++cursor[0] < rows.size();
                    case "getString" -> (String) rows.get(cursor[0])[(Integer) a[0] - 1];
                    case "getInt" -> (Integer) rows.get(cursor[0])[(Integer) a[0] - 1];
                    case "getBoolean" -> (Boolean) rows.get(cursor[0])[(Integer) a[0] - 1];
                    case "close" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        Statement st = (Statement) Proxy.newProxyInstance(
                Statement.class.getClassLoader(), new Class<?>[] {Statement.class}, (p, m, a) -> switch (m.getName()) {
                    case "executeQuery" -> {
                        assertThat((String) a[0])
                                .contains("pg_proc")
                                .contains("provolatile")
                                .contains("pronargs")
                                .contains("pronargdefaults");
                        yield rs;
                    }
                    case "close" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        return (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, a) -> {
                    if (m.getName().equals("createStatement")) {
                        return st;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void load_keysByBareAndQualifiedNameWithTheWorstVolatility() throws SQLException {
        FunctionCatalog c = FunctionCatalog.load(connectionReturning(List.of(
                new Object[] {"app", "price", 1, false},
                new Object[] {"billing", "price", 3, false},
                new Object[] {"app", "visible", 2, false},
                new Object[] {"pg_catalog", "lower", 1, true})));
        assertThat(c.volatility(null, "price")).isEqualTo(Volatility.VOLATILE);
        assertThat(c.volatility("app", "price")).isEqualTo(Volatility.IMMUTABLE);
        assertThat(c.volatility("billing", "price")).isEqualTo(Volatility.VOLATILE);
        assertThat(c.volatility(null, "visible")).isEqualTo(Volatility.STABLE);
        assertThat(c.volatility("pg_catalog", "lower")).isEqualTo(Volatility.IMMUTABLE);
        assertThat(c.volatility(null, "missing")).isEqualTo(Volatility.UNKNOWN);
        assertThat(c.volatility("other", "visible")).isEqualTo(Volatility.UNKNOWN);
    }

    @Test
    void load_knowsWhichFunctionsTakeOneArgument() throws SQLException {
        FunctionCatalog c = FunctionCatalog.load(connectionReturning(List.of(
                new Object[] {"app", "audit_row", 3, true},
                new Object[] {"app", "touch", 3, false},
                new Object[] {"billing", "touch", 3, true})));
        assertThat(c.callableWithOneArgument(null, "audit_row")).isTrue();
        assertThat(c.callableWithOneArgument("app", "audit_row")).isTrue();
        assertThat(c.callableWithOneArgument(null, "touch")).isTrue();
        assertThat(c.callableWithOneArgument("app", "touch")).isFalse();
        assertThat(c.callableWithOneArgument("billing", "touch")).isTrue();
        assertThat(c.callableWithOneArgument(null, "missing")).isFalse();
    }

    @Test
    void callableWithOneArgument_defaultsToEveryKnownFunction() {
        FunctionCatalog c = (schema, name) -> "f".equals(name) ? Volatility.STABLE : Volatility.UNKNOWN;
        assertThat(c.callableWithOneArgument(null, "f")).isTrue();
        assertThat(c.callableWithOneArgument(null, "g")).isFalse();
    }

    @Test
    void none_knowsNothing() {
        assertThat(FunctionCatalog.NONE.volatility(null, "lower")).isEqualTo(Volatility.UNKNOWN);
        assertThat(FunctionCatalog.NONE.callableWithOneArgument(null, "lower")).isFalse();
    }
}
