package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.twounits;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.Id;

/** The second persistence unit's entity. */
@Entity
public class AuditEntry {
    @Id
    @GeneratedValue
    private Long id;

    private String text;

    protected AuditEntry() {}

    public AuditEntry(String text) {
        this.text = text;
    }

    public Long getId() {
        return id;
    }

    public String getText() {
        return text;
    }
}
