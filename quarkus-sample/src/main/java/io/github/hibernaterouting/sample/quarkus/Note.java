package io.github.hibernaterouting.sample.quarkus;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.List;

/** A note of a user; Panache's active record. */
@Entity
@Table(name = "notes")
public class Note extends PanacheEntityBase {
    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    public String author;

    public String text;

    public static List<Note> byAuthor(String author) {
        return list("author = ?1 order by id desc", author);
    }
}
