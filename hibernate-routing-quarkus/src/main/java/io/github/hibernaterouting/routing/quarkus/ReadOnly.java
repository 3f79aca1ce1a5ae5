package io.github.hibernaterouting.routing.quarkus;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code @Transactional} method (or every method of a bean) as read-only: its transaction's session is
 * read-only (no dirty checking, no flush) and its connection is read-only, so its reads go to a replica under
 * {@code quarkus.hibernate-routing.transactions=PRIMARY} too, as Spring's {@code @Transactional(readOnly = true)}
 * does. A write inside it is refused by PostgreSQL ({@code cannot execute ... in a read-only transaction}). Without
 * an active transaction it does nothing: reads outside transactions are routed by the library anyway.
 *
 * <pre>{@code
 * @GET
 * @Transactional
 * @ReadOnly
 * public List<Order> orders() { ... }
 * }</pre>
 */
@Documented
@InterceptorBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface ReadOnly {
    /** Unused; for tools that want an explanation next to the annotation. */
    @Nonbinding
    String value() default "";
}
