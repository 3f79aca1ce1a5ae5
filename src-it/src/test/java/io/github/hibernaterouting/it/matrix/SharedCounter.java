package io.github.hibernaterouting.it.matrix;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.Formula;

/**
 * A counter every actor increments through JPA ({@code find}, {@code value++}, commit), without
 * {@code @Version}: only the library's check of what a replica read against the primary stands
 * between a stale read and a lost increment. The workload serializes these increments (on a
 * single server they could not lose one), so a lost increment means a stale state was written back.
 */
@Entity
@Table(name = "shared_counters")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
public class SharedCounter implements Counted {
    @Id
    int id;

    long value;

    @Formula("inet_server_port()")
    Integer server;

    protected SharedCounter() {}

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
