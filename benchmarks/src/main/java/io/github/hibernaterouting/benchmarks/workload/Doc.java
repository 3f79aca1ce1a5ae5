package io.github.hibernaterouting.benchmarks.workload;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/**
 * A row owned by one actor of the offload workload. {@code val} only grows: the actor sets it to
 * the next value of its own counter, so a read that returns less than the value the actor last
 * saw acknowledged missed the actor's write.
 */
@Entity
@Table(name = "doc")
public class Doc {
    @Id
    public long id;

    public int owner;
    public long val;

    @Version
    public long version;

    protected Doc() {}

    public Doc(long id, int owner, long val) {
        this.id = id;
        this.owner = owner;
        this.val = val;
    }
}
