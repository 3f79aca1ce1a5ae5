package io.github.hibernaterouting.sample.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/**
 * Answers every exception a Jakarta REST resource throws as the API's JSON error ({@link ApiError}):
 * a pool timeout or a replica that went away is a {@code 503} with {@code Retry-After}, a concurrent
 * change a {@code 409}, a body that is not JSON a {@code 400}, an unknown path a {@code 404}, anything
 * else a {@code 500}; never a stack trace, a class name or SQL. The cause is logged with the request id.
 *
 * <p>Mapping here rather than letting the exception reach {@link ApiErrorFilter} lets Jakarta REST
 * run its response filters, which close the scopes of {@code @RoutingStrategy}.
 */
public class ApiExceptionMapper implements ExceptionMapper<Throwable> {
    @Context
    private HttpServletRequest request;

    @Override
    public Response toResponse(Throwable failure) {
        final ApiError error = ApiError.of(failure);
        ApiErrorFilter.log(request, error, failure);
        final Response.ResponseBuilder response = Response.status(error.status())
                .type(MediaType.APPLICATION_JSON_TYPE)
                .header("Cache-Control", "no-store")
                .entity(error.body(ApiError.currentRequestId()));
        if (error.isTemporary()) {
            response.header("Retry-After", Integer.toString(ApiError.RETRY_AFTER_SECONDS));
        }
        return response.build();
    }
}
