package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An entity that {@link Shelf}'s entity collections hold. */
@Entity
@Table(name = "book")
public class Book {
    @Id
    Long id;

    String title;

    protected Book() {}

    public Book(long id, String title) {
        this.id = id;
        this.title = title;
    }
}
