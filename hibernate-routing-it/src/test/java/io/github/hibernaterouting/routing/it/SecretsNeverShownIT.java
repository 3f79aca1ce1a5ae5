package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * No secret given in a URL or a property reaches a log line (of any logger, the library's at every
 * level), an exception message anywhere in the chain of a failed bootstrap or of a refused mutation,
 * the routing status or a meter: URLs carry credentials in query parameters ({@code sslpassword},
 * {@code apiKey}, …), in {@code ;}-separated forms and in user-info ({@code user:password@host}, a
 * Redis URI's password), and the database password is given as a property.
 */
class SecretsNeverShownIT {
    @RegisterExtension
    static final PostgresClusterExtension DB =
            PostgresClusterExtension.withStandbys(2).withRedis();

    static final String SSL_PASSWORD = "s3cr3t-ssl-41";
    static final String API_KEY = "k3y-api-42";
    static final String AUTH_TOKEN = "t0ken-auth-43";
    static final String CLIENT_SECRET = "s3cr3t-client-44";
    static final String USERINFO_PASSWORD = "u1nfo-pw-45";
    static final String REDIS_USER = "routing-secrets";
    static final String REDIS_PASSWORD = "r3dis-pw-46";

    static PostgresCluster cluster;
    static RedisServer redis;

    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Map<Logger, Level> previousLevels = new LinkedHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        cluster = DB.cluster();
        redis = DB.redis();
        createSchema(cluster);
        final RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            // A Redis user with a password, so that the marker works with credentials in its URI.
            connection
                    .sync()
                    .aclSetuser(
                            REDIS_USER,
                            io.lettuce.core.AclSetuserArgs.Builder.on()
                                    .addPassword(REDIS_PASSWORD)
                                    .allKeys()
                                    .allChannels()
                                    .allCommands());
        } finally {
            client.shutdown();
        }
    }

    /** Every logger's lines reach the list; the library's own at every level. */
    @BeforeEach
    void captureEveryLogLine() {
        final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        logged.setContext(context);
        logged.start();
        final Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(logged);
        lower(root, Level.INFO);
        lower(context.getLogger("org.hibernate"), Level.INFO);
        lower(context.getLogger("com.zaxxer.hikari"), Level.INFO);
        lower(context.getLogger("io.github.hibernaterouting"), Level.TRACE);
    }

    private void lower(Logger logger, Level level) {
        previousLevels.put(logger, logger.getLevel());
        logger.setLevel(level);
    }

    @AfterEach
    void restoreLogging() {
        final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(logged);
        previousLevels.forEach(Logger::setLevel);
        logged.stop();
    }

    private static List<String> secrets() {
        return List.of(
                SSL_PASSWORD,
                API_KEY,
                AUTH_TOKEN,
                CLIENT_SECRET,
                USERINFO_PASSWORD,
                REDIS_PASSWORD,
                cluster.password());
    }

    /** Query parameters whose names hold password, key, token, secret; in a query string and a ;-form. */
    private static String withSecretParameters(String url) {
        return url + "?sslpassword=" + SSL_PASSWORD + "&apiKey=" + API_KEY + "&ApplicationName=secrets-it"
                + "&authToken=" + AUTH_TOKEN + ";client_secret=" + CLIENT_SECRET;
    }

    private static Map<String, Object> settings(String primaryUrl, String replicaUrls, String redisUri) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", primaryUrl);
        settings.put(RoutingSettings.REPLICA_URLS, replicaUrls);
        settings.put(RoutingSettings.REPLICA_PASSWORD, cluster.password());
        if (redisUri != null) {
            settings.put(RoutingSettings.REDIS_URI, redisUri);
        }
        return settings;
    }

    private String redisUri(String password) {
        return "redis://" + REDIS_USER + ":" + password + "@127.0.0.1:" + redis.port();
    }

    /** Every message and text of every log line, with the messages of its exception chain. */
    private List<String> logText() {
        final List<String> lines = new ArrayList<>();
        for (ILoggingEvent event : logged.list) {
            lines.add(event.getLoggerName() + " " + event.getLevel() + " " + event.getFormattedMessage());
            for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
                lines.add(event.getLoggerName() + " exception " + t.getClassName() + ": " + t.getMessage());
            }
        }
        return lines;
    }

    private static List<String> chain(Throwable thrown) {
        final List<String> messages = new ArrayList<>();
        for (Throwable t = thrown; t != null; t = t.getCause() == t ? null : t.getCause()) {
            messages.add(t.toString());
            for (Throwable suppressed : t.getSuppressed()) {
                messages.addAll(chain(suppressed));
            }
        }
        return messages;
    }

    private static void assertNoSecret(String what, List<String> texts) {
        for (String text : texts) {
            for (String secret : secrets()) {
                assertThat(text).as("%s must not show a secret", what).doesNotContain(secret);
            }
        }
    }

    @Test
    void runningPersistenceUnit_showsNoSecret_inLogsStatusOrMeters() {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final String replicas = cluster.standbys().stream()
                .map(node -> withSecretParameters(node.jdbcUrl()) + "&password=" + cluster.password())
                .reduce((a, b) -> a + "," + b)
                .orElseThrow();
        final Map<String, Object> settings =
                settings(withSecretParameters(cluster.primary().jdbcUrl()), replicas, redisUri(REDIS_PASSWORD));
        settings.put(RoutingSettings.METER_REGISTRY, meters);
        final EntityManagerFactory emf = emf(cluster, settings);
        final RoutingStatus status;
        try (emf) {
            awaitReplicasUp(emf);
            try (RoutingScope ignored = RoutingScope.builder().actor("alice").open();
                    EntityManager em = emf.createEntityManager()) {
                em.getTransaction().begin();
                em.persist(new Note("written with secrets around"));
                em.getTransaction().commit();
                em.createQuery("select count(n) from Note n").getSingleResult();
            }
            status = RoutingStatus.of(emf);
            assertThat(status.nodes()).hasSize(3);
            // The library's pools record HikariCP's meters in the same registry, tagged with the pool's name only.
            final List<String> pools = List.of("hibernate-routing-primary", "hibernate-routing-replica1");
            for (int i = 0; i < pools.size(); i++) {
                final double maximum = status.nodes().get(i).pool().maximum();
                assertThat(meters.find("hikaricp.connections.max")
                                .tag("pool", pools.get(i))
                                .gauge())
                        .as("hikaricp.connections.max of %s", pools.get(i))
                        .isNotNull()
                        .satisfies(gauge -> assertThat(gauge.value()).isEqualTo(maximum));
            }
            assertThat(meters.find("hikaricp.connections.acquire").timers()).isNotEmpty();
        }
        assertNoSecret("the routing status", List.of(status.toString()));
        assertNoSecret(
                "a meter",
                meters.getMeters().stream()
                        .map(Meter::getId)
                        .map(id -> id.getName() + " " + id.getTags() + " " + id.getDescription())
                        .toList());
        assertThat(logText()).as("the start-up line").anyMatch(line -> line.contains("hibernate-routing started"));
        assertNoSecret("a log line", logText());
    }

    @Test
    void failedBootstraps_showNoSecret_inAnyExceptionOfTheChainOrLogLine() {
        final String primary = cluster.primary().jdbcUrl();
        final String replica = cluster.standby(1).jdbcUrl();
        final String host = "127.0.0.1:" + cluster.primary().port();
        final List<Map<String, Object>> broken = List.of(
                // user-info in a JDBC URL, which pgjdbc would take for a host name
                settings(
                        withSecretParameters("jdbc:postgresql://app:" + USERINFO_PASSWORD + "@" + host + "/app"),
                        replica,
                        null),
                settings(
                        primary,
                        withSecretParameters("jdbc:postgresql://app:" + USERINFO_PASSWORD + "@" + host + "/app"),
                        null),
                // a URL the driver does not accept: HikariCP names it in its exception
                settings(withSecretParameters("jdbc:postgresql://127.0.0.1:notaport/app"), replica, null),
                // a server that does not answer
                settings(
                        withSecretParameters("jdbc:postgresql://127.0.0.1:1/app") + "&connectTimeout=1", replica, null),
                // not a PostgreSQL URL
                settings(primary, "jdbc:mysql://app:" + USERINFO_PASSWORD + "@db/app?password=" + SSL_PASSWORD, null),
                settings(primary, replica, "rediss-typo://:" + REDIS_PASSWORD + "@cache:6379"));
        for (Map<String, Object> settings : broken) {
            final Throwable thrown = catchThrowable(() -> emf(cluster, settings).close());
            assertThat(thrown).as("bootstrap with %s", settings.keySet()).isNotNull();
            assertNoSecret("an exception of a failed bootstrap", chain(thrown));
        }
        assertNoSecret("a log line", logText());
    }

    @Test
    void refusedMutation_withAWrongRedisPassword_showsNoSecret() {
        final EntityManagerFactory emf = emf(
                cluster,
                settings(
                        withSecretParameters(cluster.primary().jdbcUrl()),
                        cluster.standby(1).jdbcUrl(),
                        redisUri(REDIS_PASSWORD + "-wrong")));
        try (emf) {
            final Throwable thrown = catchThrowable(() -> ReadYourWrites.beforeMutation(emf, "bob"));
            assertThat(thrown).isInstanceOf(ConsistencyMarkerException.class);
            assertNoSecret("the refused mutation's exception", chain(thrown));
        }
        assertNoSecret("a log line", logText());
    }
}
