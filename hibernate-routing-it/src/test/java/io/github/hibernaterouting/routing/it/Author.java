package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Cacheable;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import java.util.HashSet;
import java.util.Set;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.NaturalId;
import org.hibernate.annotations.NaturalIdCache;

/**
 * A cached entity with a cached natural id ({@code email}) and a cached collection ({@code tags}), for
 * the second-level cache tests.
 */
@Entity
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
@NaturalIdCache
public class Author {
    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE)
    Long id;

    @NaturalId
    String email;

    String name;

    @ElementCollection
    @CollectionTable(name = "author_tag", joinColumns = @JoinColumn(name = "author_id"))
    @Column(name = "tag")
    @Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
    Set<String> tags = new HashSet<>();

    protected Author() {}

    public Author(String email, String name, Set<String> tags) {
        this.email = email;
        this.name = name;
        this.tags.addAll(tags);
    }
}
