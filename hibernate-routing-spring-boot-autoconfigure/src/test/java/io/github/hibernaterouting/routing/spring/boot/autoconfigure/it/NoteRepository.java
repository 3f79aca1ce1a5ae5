package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it;

import org.springframework.data.jpa.repository.JpaRepository;

public interface NoteRepository extends JpaRepository<Note, Long> {}
