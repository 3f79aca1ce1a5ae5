package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Spring Boot's start-failure report for a bad hibernate-routing setting: the setting and what is
 * wrong with it first, instead of the chain of beans whose creation it stopped (the filter, the
 * persistence unit, the transaction manager), which Spring would otherwise lead with. Registered in
 * {@code META-INF/spring.factories}.
 */
final class RoutingConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RoutingConfigurationException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RoutingConfigurationException cause) {
        return new FailureAnalysis(
                "The hibernate-routing setting '" + cause.getKey() + "' is not valid:\n\n    " + cause.getMessage(),
                "Correct or remove '" + cause.getKey() + "' where it is set (application.properties or .yaml,"
                        + " an environment variable, a command-line argument). docs/configuration.md lists every"
                        + " setting of the library, docs/spring-boot.md the starter's own.",
                cause);
    }
}
