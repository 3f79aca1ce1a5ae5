package io.github.hibernaterouting.routing.it;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.NamedNativeQuery;
import jakarta.persistence.NamedQuery;
import jakarta.persistence.QueryHint;
import jakarta.persistence.Table;

/**
 * The note table again, with named queries that carry the routing strategy as a hint: the plain
 * form, which Hibernate drops, and the documented database-hint form.
 */
@Entity(name = "HintedNote")
@Table(name = "note")
@NamedQuery(
        name = "HintedNote.plainHint",
        query = "select n from HintedNote n",
        hints = @QueryHint(name = "hibernate.routing.strategy", value = "PRIMARY"))
@NamedQuery(
        name = "HintedNote.databaseHint",
        query = "select n from HintedNote n",
        hints = @QueryHint(name = "hibernate.query.database", value = "hibernate.routing.strategy=PRIMARY"))
@NamedNativeQuery(
        name = "HintedNote.portWithPlainHint",
        query = "select inet_server_port()",
        hints = @QueryHint(name = "hibernate.routing.strategy", value = "PRIMARY"))
public class HintedNote {
    @Id
    Long id;

    String text;

    protected HintedNote() {}
}
