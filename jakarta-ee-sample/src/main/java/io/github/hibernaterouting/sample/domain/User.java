package io.github.hibernaterouting.sample.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * A user of the API, authenticated by an API key; also the routing library's actor table
 * ({@code hibernate.routing.actor_stamps=TABLE}), whose {@code read_after_write_lsn} column holds the
 * WAL position of the user's last committed write.
 */
@Entity
@Table(name = "users")
public class User {
    @Id
    private Long id;

    @Column(name = "api_key", nullable = false, unique = true)
    private String apiKey;

    @Column(nullable = false)
    private String name;

    @Column(name = "can_write", nullable = false)
    private boolean canWrite;

    /**
     * The user's stamp as PostgreSQL prints a {@code pg_lsn} ({@code 0/3000060}), or {@code null}.
     * The library raises it after each commit; the application only reads it, so Hibernate never writes it.
     */
    @Column(name = "read_after_write_lsn", insertable = false, updatable = false)
    private String readAfterWriteLsn;

    protected User() {}

    public Long getId() {
        return id;
    }

    public String getName() {
        return name;
    }

    public boolean canWrite() {
        return canWrite;
    }

    public String getReadAfterWriteLsn() {
        return readAfterWriteLsn;
    }
}
