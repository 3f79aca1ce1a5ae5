package io.github.hibernaterouting.benchmarks.workload;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;

/** The row each write transaction of the overhead workload inserts. */
@Entity
@Table(name = "item_event")
public class ItemEvent {
    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "item_event_seq")
    @SequenceGenerator(name = "item_event_seq", sequenceName = "item_event_seq", allocationSize = 50)
    public Long id;

    @Column(name = "item_id")
    public long itemId;

    public String text;

    protected ItemEvent() {}

    public ItemEvent(long itemId, String text) {
        this.itemId = itemId;
        this.text = text;
    }
}
