package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Version;

/**
 * A versioned entity: lost updates are caught by its version check. Cached (with the cache provider's
 * default access type) where a test switches the second-level cache on.
 */
@Entity
@Cacheable
public class Account {
    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE)
    Long id;

    String name;

    int balance;

    @Version
    long version;

    protected Account() {}

    public Account(String name, int balance) {
        this.name = name;
        this.balance = balance;
    }
}
