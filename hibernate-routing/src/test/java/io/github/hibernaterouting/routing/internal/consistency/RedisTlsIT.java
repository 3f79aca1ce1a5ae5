package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.testkit.RedisServer;
import io.github.hibernaterouting.testkit.TestkitException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The marker over TLS ({@code rediss://}), once: a real Redis with a TLS port and a self-signed
 * certificate (made with the JDK's keytool), trusted through the JVM's trust store, which is what
 * the library uses (Lettuce's defaults: the JDK's TLS, the peer verified, host name included). The
 * password in the URI never reaches the log.
 */
class RedisTlsIT {
    private static final String PASSWORD = "tls-secret-4711";
    private static final char[] STORE_PASSWORD = "changeit".toCharArray();

    @TempDir
    Path dir;

    @Test
    void markerRoundTrip_overTls_withTheCertificateTrusted_andThePasswordNeverLogged() throws Exception {
        final Path keyStore = dir.resolve("redis.p12");
        keytool(
                "-genkeypair",
                "-alias",
                "redis",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=127.0.0.1",
                "-ext",
                "san=ip:127.0.0.1",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                keyStore.toString(),
                "-storepass",
                "changeit",
                "-keypass",
                "changeit");
        final KeyStore keys = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(keyStore)) {
            keys.load(in, STORE_PASSWORD);
        }
        final Certificate certificate = keys.getCertificate("redis");
        final Path cert = pem(dir.resolve("redis.crt"), "CERTIFICATE", certificate.getEncoded());
        final Path key = pem(
                dir.resolve("redis.key"),
                "PRIVATE KEY",
                keys.getKey("redis", STORE_PASSWORD).getEncoded());
        final Path trustStore = dir.resolve("trust.p12");
        final KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("redis", certificate);
        try (OutputStream out = Files.newOutputStream(trustStore)) {
            trust.store(out, STORE_PASSWORD);
        }

        final int tlsPort = RedisServer.freePort();
        final RedisServer redis;
        try {
            // The plain port stays open for the test's own commands (the default user, no password); the
            // library's user exists only with a password.
            redis = RedisServer.start(List.of(
                    "--tls-port",
                    Integer.toString(tlsPort),
                    "--tls-cert-file",
                    cert.toString(),
                    "--tls-key-file",
                    key.toString(),
                    "--tls-ca-cert-file",
                    cert.toString(),
                    "--tls-auth-clients",
                    "no",
                    "--user",
                    "marker",
                    "on",
                    ">" + PASSWORD,
                    "~*",
                    "&*",
                    "+@all"));
        } catch (TestkitException e) {
            final String message = "This Redis binary does not start with TLS (" + e.getMessage() + ")";
            // Skipped on a developer's machine without TLS support, a failure in CI.
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(message);
            }
            Assumptions.abort(message);
            return;
        }

        final String previousStore = System.getProperty("javax.net.ssl.trustStore");
        final String previousPassword = System.getProperty("javax.net.ssl.trustStorePassword");
        final String previousType = System.getProperty("javax.net.ssl.trustStoreType");
        final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        try (redis) {
            System.setProperty("javax.net.ssl.trustStore", trustStore.toString());
            System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
            System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
            final String runId = RedisMarker.runId(redis.query("INFO server"));
            // An alive key of this Redis process from long ago: no start-up window.
            assertThat(redis.query("HSET tls:alive run_id " + runId + " since 0"))
                    .isEqualTo(":2");
            final String uri = "rediss://marker:" + PASSWORD + "@127.0.0.1:" + tlsPort;
            try (RedisMarker marker = new RedisMarker(uri, "tls", Duration.ofSeconds(10), Duration.ofSeconds(5))) {
                final String id = marker.markPending("a");
                assertThat(marker.read("a")).as("pending").isEqualTo(ActorStamps.PENDING);
                marker.raise("a", 0x1234L, List.of(id));
                assertThat(marker.read("a")).as("raised").isEqualTo(0x1234L);
            }
            assertThat(redis.query("HGET tls:replication:a lsn"))
                    .as("written to this Redis, through its TLS port")
                    .isEqualTo(RedisMarker.hex(0x1234L));
            assertThat(logged.list.stream().map(ILoggingEvent::getFormattedMessage))
                    .as("the connection is logged, the URI masked")
                    .anySatisfy(message -> assertThat(message)
                            .contains("Connected to Redis at rediss://marker:****@127.0.0.1:" + tlsPort));
            assertThat(logged.list)
                    .as("no log line holds the password")
                    .noneSatisfy(event -> assertThat(event.getFormattedMessage()
                                    + (event.getThrowableProxy() == null
                                            ? ""
                                            : event.getThrowableProxy().getMessage()))
                            .contains(PASSWORD));
        } finally {
            root.detachAppender(logged);
            restore("javax.net.ssl.trustStore", previousStore);
            restore("javax.net.ssl.trustStorePassword", previousPassword);
            restore("javax.net.ssl.trustStoreType", previousType);
        }
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }

    private static Path pem(Path file, String type, byte[] der) throws Exception {
        final String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der);
        Files.writeString(file, "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n");
        return file;
    }

    private void keytool(String... args) throws Exception {
        final List<String> command = new java.util.ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("keytool.log").toFile())
                .start();
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("keytool ends").isTrue();
        assertThat(process.exitValue())
                .as("keytool: %s", Files.readString(dir.resolve("keytool.log")))
                .isZero();
    }
}
