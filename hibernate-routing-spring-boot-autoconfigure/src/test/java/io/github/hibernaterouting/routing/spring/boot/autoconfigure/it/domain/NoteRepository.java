package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain;

import org.springframework.data.jpa.repository.JpaRepository;

public interface NoteRepository extends JpaRepository<Note, Long> {}
