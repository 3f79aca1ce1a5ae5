package io.github.hibernaterouting.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.postgresql.replication.LogSequenceNumber;

/** The JDBC the cluster's parts share: connections to a node, one-value queries, LSN text. */
final class Jdbc {
    private Jdbc() {}

    /**
     * A new connection to {@code node}: its own database, or {@code database} on the same server when
     * not {@code null}; the caller closes it.
     */
    static Connection open(Node node, String database, String user, String password) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        props.setProperty("connectTimeout", "10");
        props.setProperty("ApplicationName", "hibernate-routing-testkit");
        String url = database == null
                ? node.jdbcUrl()
                : "jdbc:postgresql://" + node.host() + ":" + node.port() + "/" + database;
        return DriverManager.getConnection(url, props);
    }

    /** The first column of the first row of {@code sql}. */
    static String query(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    static LogSequenceNumber lsn(String text) {
        return text == null ? null : LogSequenceNumber.valueOf(text);
    }

    static String str(LogSequenceNumber lsn) {
        return lsn == null ? "null" : lsn.asString();
    }

    static String literal(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // Closing a broken connection.
            }
        }
    }
}
