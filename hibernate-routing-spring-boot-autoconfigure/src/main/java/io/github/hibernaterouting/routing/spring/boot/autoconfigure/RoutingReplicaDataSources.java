package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import com.zaxxer.hikari.HikariDataSource;
import java.util.List;
import javax.sql.DataSource;

/**
 * The replica pools the starter built from {@code hibernate.routing.*}, in configuration order
 * ({@code replica1} first). A bean of the application context, which closes the pools when it closes;
 * not {@code DataSource} beans themselves, so that Spring Boot keeps one primary {@code DataSource}
 * for everything else (JDBC templates, migrations, its own health check).
 */
public final class RoutingReplicaDataSources implements AutoCloseable {
    private final List<HikariDataSource> pools;

    RoutingReplicaDataSources(List<HikariDataSource> pools) {
        this.pools = List.copyOf(pools);
    }

    /** The pools, {@code replica1} first; empty when no replica is configured (routing off). */
    public List<DataSource> dataSources() {
        return List.copyOf(pools);
    }

    /** Whether no replica is configured. */
    public boolean isEmpty() {
        return pools.isEmpty();
    }

    /** Closes every pool. */
    @Override
    public void close() {
        for (HikariDataSource pool : pools) {
            pool.close();
        }
    }
}
