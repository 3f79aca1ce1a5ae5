package io.github.hibernaterouting.sample.boot;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.transaction.annotation.Transactional;

/** Spring Data reads are read-only transactions, so they run on a replica. */
@Transactional(readOnly = true)
public interface NoteRepository extends JpaRepository<Note, Long> {
    List<Note> findByAuthorOrderByIdDesc(String author);
}
