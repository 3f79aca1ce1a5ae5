package io.github.hibernaterouting.benchmarks.workload;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** A versioned row of the overhead workload; 10,000 of them are seeded. */
@Entity
@Table(name = "item")
public class Item {
    @Id
    public long id;

    public String name;
    public int qty;

    @Version
    public long version;
}
