package io.github.hibernaterouting.it.matrix;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.Formula;

/** A counter every actor increments concurrently through JPA, protected by its {@code @Version}. */
@Entity
@Table(name = "versioned_counters")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
public class VersionedCounter implements Counted {
    @Id
    int id;

    long value;

    @Version
    long version;

    @Formula("inet_server_port()")
    Integer server;

    protected VersionedCounter() {}

    @Override
    public long value() {
        return value;
    }

    @Override
    public void increment() {
        value++;
    }

    @Override
    public Integer server() {
        return server;
    }
}
