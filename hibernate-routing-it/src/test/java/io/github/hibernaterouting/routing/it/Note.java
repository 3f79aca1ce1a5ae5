package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/**
 * An unversioned entity: the library must re-verify it against the primary before overwriting it.
 * Cached (non-strict read-write) where a test switches the second-level cache on.
 */
@Entity
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.NONSTRICT_READ_WRITE)
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
