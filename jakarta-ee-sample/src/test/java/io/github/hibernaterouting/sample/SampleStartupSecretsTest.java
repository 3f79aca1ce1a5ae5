package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The sample's start-up, given servers whose URLs carry credentials, shows none of them: not in a
 * log line of any logger, not in any exception of the failed start (the servers do not answer).
 */
class SampleStartupSecretsTest {
    private static final List<String> SECRETS =
            List.of("s3cr3t-ssl", "k3y-api", "t0ken-auth", "db-passw0rd", "r3dis-pw");

    @Test
    void failedStartup_withCredentialsInEveryUrl_showsNone() {
        final String primary =
                "jdbc:postgresql://127.0.0.1:1/app?connectTimeout=1&sslpassword=s3cr3t-ssl&apiKey=k3y-api";
        final List<String> replicas = List.of("jdbc:postgresql://127.0.0.1:2/app?authToken=t0ken-auth");
        final Servers servers = new Servers(
                primary,
                replicas,
                "app",
                "db-passw0rd",
                "redis://cache-user:r3dis-pw@127.0.0.1:3",
                NodeNames.fromUrls(primary, replicas));
        final ServletContext context = (ServletContext) Proxy.newProxyInstance(
                ServletContext.class.getClassLoader(),
                new Class<?>[] {ServletContext.class},
                (proxy, method, args) ->
                        method.getName().equals("getAttribute") && Servers.ATTRIBUTE.equals(args[0]) ? servers : null);

        final LoggerContext loggers = (LoggerContext) LoggerFactory.getILoggerFactory();
        final Logger root = loggers.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        final Logger sample = loggers.getLogger("io.github.hibernaterouting");
        final Level rootLevel = root.getLevel();
        final Level sampleLevel = sample.getLevel();
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.setContext(loggers);
        logged.start();
        root.addAppender(logged);
        root.setLevel(Level.INFO);
        sample.setLevel(Level.TRACE);
        final Throwable thrown;
        try {
            thrown = catchThrowable(() -> new SampleBootstrap().contextInitialized(new ServletContextEvent(context)));
        } finally {
            root.detachAppender(logged);
            root.setLevel(rootLevel);
            sample.setLevel(sampleLevel);
        }

        assertThat(thrown).as("the servers do not answer").isNotNull();
        final List<String> texts = new ArrayList<>();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            texts.add(t.toString());
        }
        for (ILoggingEvent event : logged.list) {
            texts.add(event.getFormattedMessage());
            for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
                texts.add(t.getClassName() + ": " + t.getMessage());
            }
        }
        assertThat(texts)
                .anyMatch(text -> text.contains("Sample servers: Servers[primary=jdbc:postgresql://127.0.0.1:1"));
        for (String text : texts) {
            assertThat(text).doesNotContain(SECRETS);
        }
    }
}
