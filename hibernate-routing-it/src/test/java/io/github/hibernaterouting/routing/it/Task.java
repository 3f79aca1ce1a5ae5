package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Embeddable;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

/** An unversioned entity with a lazy many-to-one and an embeddable, for {@link DetachedMergeIT}. */
@Entity
@Table(name = "task")
public class Task {
    @Id
    Long id;

    String title;

    @ManyToOne(fetch = FetchType.LAZY)
    Note note;

    @Embedded
    Due due;

    protected Task() {}

    Task(Long id, String title, Note note, Due due) {
        this.id = id;
        this.title = title;
        this.note = note;
        this.due = due;
    }

    @Embeddable
    public static class Due {
        Integer week;
        String owner;

        protected Due() {}

        Due(Integer week, String owner) {
            this.week = week;
            this.owner = owner;
        }
    }
}
