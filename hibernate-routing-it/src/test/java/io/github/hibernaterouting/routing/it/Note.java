package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;

/** An unversioned entity: the library must re-verify it against the primary before overwriting it. */
@Entity
public class Note {
    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE)
    Long id;

    String text;

    protected Note() {}

    public Note(String text) {
        this.text = text;
    }
}
