package io.github.hibernaterouting.it.matrix;

import jakarta.data.repository.Find;
import jakarta.data.repository.Repository;
import jakarta.data.repository.Update;

/**
 * A Jakarta Data repository of the unversioned shared counter, as new Jakarta EE code is written:
 * hibernate-processor generates {@code SharedCounters_}, which runs on a {@code StatelessSession}.
 */
@Repository
public interface SharedCounters {
    @Find
    SharedCounter byId(int id);

    @Update
    void update(SharedCounter counter);
}
