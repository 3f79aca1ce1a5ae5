package io.github.hibernaterouting.sample.web;

/**
 * The body of {@code POST} and {@code PATCH /api/notes}: a {@code null} field is left unchanged by {@code PATCH}.
 *
 * @param title the title, 1 to 200 characters
 * @param body the text, at most 10 000 characters
 */
public record NoteInput(String title, String body) {}
