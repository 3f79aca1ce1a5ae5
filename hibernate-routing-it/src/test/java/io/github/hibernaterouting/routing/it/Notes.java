package io.github.hibernaterouting.routing.it;

import jakarta.data.repository.Delete;
import jakarta.data.repository.Find;
import jakarta.data.repository.Insert;
import jakarta.data.repository.Query;
import jakarta.data.repository.Repository;
import jakarta.data.repository.Update;
import java.util.List;

/**
 * A Jakarta Data repository of {@link Note}, as new Jakarta EE code is written: hibernate-processor
 * generates {@code Notes_}, which runs every method on a {@code StatelessSession}.
 */
@Repository
public interface Notes {
    @Find
    Note byId(Long id);

    @Query("where text = :text")
    List<Note> withText(String text);

    @Insert
    void insert(Note note);

    @Update
    void update(Note note);

    @Delete
    void delete(Note note);
}
