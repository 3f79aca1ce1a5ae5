package io.github.hibernaterouting.it.matrix;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.Formula;

/**
 * One thread's own counter, unversioned: only its thread increments it ({@code find}, {@code value++},
 * commit), and the thread and its twin (the same actor) read it. {@link #server} is the port of the
 * server that loaded the state ({@code inet_server_port()} in the entity's select), so a read says which
 * server it came from; for a second-level cache hit, the server that loaded what the cache holds.
 */
@Entity
@Table(name = "counters")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
public class Counter implements Counted {
    @Id
    @Column(name = "row_id")
    int id;

    long value;

    @Formula("inet_server_port()")
    Integer server;

    protected Counter() {}

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
