package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Version;

/** A versioned entity: lost updates are caught by its version check. */
@Entity
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
