package io.github.hibernaterouting.routing.quarkus.runtime;

import io.quarkus.runtime.annotations.ConfigDocMapKey;
import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The configuration of hibernate-routing under Quarkus: the replicas of the default persistence unit,
 * whose primary is the default datasource, and the library's settings.
 */
@ConfigMapping(prefix = "quarkus.hibernate-routing")
@ConfigRoot(phase = ConfigPhase.RUN_TIME)
public interface HibernateRoutingConfig {
    /**
     * The hot standbys as named datasources of the application ({@code quarkus.datasource."replica1".*}), by
     * name. Each must be a PostgreSQL datasource that does not join JTA transactions
     * ({@code quarkus.datasource."replica1".jdbc.transactions=disabled}). Not together with {@code replica-urls}.
     */
    Optional<List<String>> replicaDatasources();

    /**
     * The hot standbys as JDBC URLs ({@code jdbc:postgresql://...}); the library builds a HikariCP pool for each.
     * Not together with {@code replica-datasources}. Without either, the environment variable
     * {@code HIBERNATE_ROUTING_REPLICA_URLS}; without any, routing is off.
     */
    Optional<List<String>> replicaUrls();

    /** The user of the replicas given as URLs; default: the default datasource's user. */
    Optional<String> replicaUsername();

    /** The password of the replicas given as URLs; default: the default datasource's password. Never logged. */
    Optional<String> replicaPassword();

    /**
     * Where read-write transactions ({@code @Transactional}) start: {@code PRIMARY}, on the primary from their
     * begin; {@code LAZY}, on a replica until their first write. Read-only work ({@code @ReadOnly}, requests
     * without a transaction) reads from replicas under both.
     */
    @WithDefault("PRIMARY")
    String transactions();

    /** The Redis (or Sentinel) URI of the shared mutation marker, for read-your-writes across instances. */
    Optional<String> redisUri();

    /**
     * Any other setting of the library, by its name after {@code hibernate.routing.}, for example
     * {@code quarkus.hibernate-routing.settings.max-replica-lag=2s} or
     * {@code quarkus.hibernate-routing.settings."actor_stamps"=TABLE}.
     */
    @ConfigDocMapKey("setting")
    Map<String, String> settings();

    /** The read-your-writes filter of Quarkus REST. */
    Web web();

    /** The SmallRye Health readiness check. */
    Health health();

    /** The read-your-writes filter of Quarkus REST. */
    interface Web {
        /** Whether requests to Quarkus REST resources are routed and keep read-your-writes for their actor. */
        @WithDefault("true")
        boolean enabled();

        /**
         * Endpoint rules for safe methods, {@code [METHOD] /path/pattern=STRATEGY}, comma-separated, for example
         * {@code GET /auth/**=PRIMARY, /reports/*=STALE_READ}.
         */
        Optional<String> rules();

        /** Whether a request without an authenticated user is answered {@code 401}. */
        @WithDefault("false")
        boolean requireActor();
    }

    /** The SmallRye Health readiness check. */
    interface Health {
        /**
         * {@code false}: a replica that cannot serve leaves readiness UP (the library reads elsewhere) and shows as
         * {@code DEGRADED} in the check's data; {@code true}: it makes readiness DOWN.
         */
        @WithDefault("false")
        boolean strict();
    }
}
