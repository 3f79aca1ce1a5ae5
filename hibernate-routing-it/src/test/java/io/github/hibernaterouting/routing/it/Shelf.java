package io.github.hibernaterouting.routing.it;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.JoinTable;
import jakarta.persistence.ManyToMany;
import jakarta.persistence.MapKeyColumn;
import jakarta.persistence.OneToMany;
import jakarta.persistence.OrderColumn;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hibernate.annotations.BatchSize;

/**
 * An unversioned owner of one collection of each kind Hibernate writes differently: element
 * collections as a set, a list and a bag, a map, an entity bag through a join table
 * ({@code @OneToMany} without a join column), and an entity set ({@code @ManyToMany}). Bags are
 * deleted and inserted again whenever they change; sets, lists and maps are written row by row, and
 * deleted with one statement when they become empty.
 */
@Entity
@Table(name = "shelf")
public class Shelf {
    @Id
    Long id;

    String name;

    /** A set; loaded in batches, so that initializing one shelf's tags initializes others' too. */
    @ElementCollection
    @CollectionTable(name = "shelf_tag", joinColumns = @JoinColumn(name = "shelf_id"))
    @Column(name = "tag")
    @BatchSize(size = 10)
    Set<String> tags = new HashSet<>();

    @ElementCollection
    @CollectionTable(name = "shelf_line", joinColumns = @JoinColumn(name = "shelf_id"))
    @OrderColumn(name = "position")
    @Column(name = "line")
    List<String> lines = new ArrayList<>();

    /** A bag: a list without an order column. */
    @ElementCollection
    @CollectionTable(name = "shelf_label", joinColumns = @JoinColumn(name = "shelf_id"))
    @Column(name = "label")
    List<String> labels = new ArrayList<>();

    @ElementCollection
    @CollectionTable(name = "shelf_attribute", joinColumns = @JoinColumn(name = "shelf_id"))
    @MapKeyColumn(name = "name")
    @Column(name = "value")
    Map<String, String> attributes = new HashMap<>();

    /** A bag of entities through a join table. */
    @OneToMany
    @JoinTable(
            name = "shelf_book",
            joinColumns = @JoinColumn(name = "shelf_id"),
            inverseJoinColumns = @JoinColumn(name = "book_id"))
    List<Book> books = new ArrayList<>();

    @ManyToMany
    @JoinTable(
            name = "shelf_favourite",
            joinColumns = @JoinColumn(name = "shelf_id"),
            inverseJoinColumns = @JoinColumn(name = "book_id"))
    Set<Book> favourites = new HashSet<>();

    protected Shelf() {}

    public Shelf(long id, String name) {
        this.id = id;
        this.name = name;
    }
}
