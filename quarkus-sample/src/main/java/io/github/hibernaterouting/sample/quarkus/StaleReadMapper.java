package io.github.hibernaterouting.sample.quarkus;

import io.github.hibernaterouting.routing.StaleReplicaReadException;
import jakarta.persistence.OptimisticLockException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;
import java.util.Map;

/**
 * A write refused because what it would overwrite changed since it was read: {@code 409}, retry. Jakarta
 * Persistence reports the library's {@link StaleReplicaReadException} (read on a replica behind the primary) as an
 * {@link OptimisticLockException}, like a {@code @Version} conflict.
 */
@Provider
public class StaleReadMapper implements ExceptionMapper<OptimisticLockException> {
    @Override
    public Response toResponse(OptimisticLockException e) {
        final boolean replica = e.getCause() instanceof StaleReplicaReadException;
        return Response.status(Response.Status.CONFLICT)
                .entity(Map.of(
                        "detail",
                        (replica
                                        ? "What this write would change was read on a replica behind the primary"
                                        : "What this write would change was changed concurrently")
                                + "; nothing was written. Retry.",
                        "staleReplicaRead",
                        replica))
                .build();
    }
}
