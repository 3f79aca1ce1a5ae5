package io.github.hibernaterouting.sample.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** What the background worker computed for a note, and which server it read the note from. */
@Entity
@Table(name = "note_word_counts")
public class NoteWordCount {
    @Id
    @Column(name = "note_id")
    private Long noteId;

    @Column(nullable = false)
    private int words;

    @Column(name = "read_from", nullable = false)
    private String readFrom;

    @Column(nullable = false)
    private int attempts;

    @Column(name = "counted_at", nullable = false)
    private Instant countedAt;

    protected NoteWordCount() {}

    public NoteWordCount(Long noteId, int words, String readFrom, int attempts) {
        this.noteId = noteId;
        this.words = words;
        this.readFrom = readFrom;
        this.attempts = attempts;
        this.countedAt = Instant.now();
    }

    public Long getNoteId() {
        return noteId;
    }

    public int getWords() {
        return words;
    }

    public String getReadFrom() {
        return readFrom;
    }

    public int getAttempts() {
        return attempts;
    }
}
