package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.sample.domain.Note;
import io.github.hibernaterouting.sample.domain.NoteWordCount;

/**
 * A note as the API shows it.
 *
 * @param id the note's id
 * @param title the title
 * @param body the text
 * @param version the optimistic-locking version
 * @param createdAt when it was created (ISO-8601)
 * @param words the background worker's word count, or {@code null} until it has run
 * @param wordsReadFrom the server the worker read the note from, or {@code null}
 */
public record NoteJson(
        long id, String title, String body, long version, String createdAt, Integer words, String wordsReadFrom) {

    static NoteJson of(Note note, NoteWordCount count) {
        return new NoteJson(
                note.getId(),
                note.getTitle(),
                note.getBody(),
                note.getVersion(),
                note.getCreatedAt().toString(),
                count == null ? null : count.getWords(),
                count == null ? null : count.getReadFrom());
    }
}
