package io.github.hibernaterouting.it.matrix;

import jakarta.persistence.Cacheable;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.List;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.Formula;

/**
 * An unversioned owner of a shared collection that every actor adds to. The collection is a bag (a
 * {@code List} without an order column), which Hibernate writes by deleting the owner's rows and
 * inserting every element it holds: a bag loaded from a lagging replica, added to and flushed, would
 * delete the elements the replica did not have yet.
 */
@Entity
@Table(name = "boards")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
public class Board {
    @Id
    int id;

    String name;

    @ElementCollection
    @CollectionTable(name = "board_notes", joinColumns = @JoinColumn(name = "board_id"))
    @Column(name = "note")
    @Cache(usage = CacheConcurrencyStrategy.READ_WRITE)
    List<String> notes = new ArrayList<>();

    @Formula("inet_server_port()")
    Integer server;

    protected Board() {}
}
