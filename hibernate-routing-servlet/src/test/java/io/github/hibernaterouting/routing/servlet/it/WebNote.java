package io.github.hibernaterouting.routing.servlet.it;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;

/** The test application's only entity. */
@Entity
@Table(name = "web_note")
public class WebNote {
    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "web_note_seq")
    @SequenceGenerator(name = "web_note_seq", sequenceName = "web_note_seq", allocationSize = 50)
    Long id;

    String text;

    protected WebNote() {}

    public WebNote(String text) {
        this.text = text;
    }
}
