package io.github.hibernaterouting.sample.worker;

import io.github.hibernaterouting.routing.ConsistencyToken;

/**
 * "Note {@code noteId} was written": what {@code POST /api/notes} publishes for the worker.
 *
 * @param noteId the note
 * @param ownerId the note's owner, to tell only them about the result
 * @param stamp the primary's WAL position after the write committed; the worker's reads must reflect it
 */
public record NoteMessage(long noteId, long ownerId, ConsistencyToken stamp) {}
