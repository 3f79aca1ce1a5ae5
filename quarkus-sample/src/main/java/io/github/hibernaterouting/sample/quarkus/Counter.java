package io.github.hibernaterouting.sample.quarkus;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * A counter without {@code @Version}: an increment that read it on a replica behind the primary would write back
 * an old value plus one, losing other increments; the library refuses that write ({@code 409} here).
 */
@Entity
@Table(name = "counters")
public class Counter {
    @Id
    public String name;

    @Column(name = "count_value")
    public long value;
}
