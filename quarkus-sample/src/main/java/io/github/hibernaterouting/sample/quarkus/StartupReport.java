package io.github.hibernaterouting.sample.quarkus;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

/**
 * Logs how many notes there are once the application started, from a thread of its own, outside any request and
 * without a CDI request context: work that is not a request (a job, a consumer) reads through the library too.
 */
@ApplicationScoped
public class StartupReport {
    private static final Logger LOG = Logger.getLogger(StartupReport.class);

    void onStart(@Observes StartupEvent event) {
        final Thread report = new Thread(
                () -> {
                    try {
                        final long notes = QuarkusTransaction.requiringNew().call(() -> Note.count());
                        LOG.infof("Startup report: %d notes", notes);
                    } catch (RuntimeException e) {
                        LOG.error("Startup report failed", e);
                    }
                },
                "startup-report");
        report.setDaemon(true);
        report.start();
    }
}
