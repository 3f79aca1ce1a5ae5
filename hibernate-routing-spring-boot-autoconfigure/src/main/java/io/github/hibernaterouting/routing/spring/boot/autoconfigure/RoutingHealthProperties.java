package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How the {@code hibernateRouting} health contributor reports a replica that cannot serve reads,
 * under Actuator's own prefix for health indicators ({@code management.health.hibernate-routing.*},
 * beside Spring Boot's {@code enabled}).
 */
@ConfigurationProperties(RoutingHealthProperties.PREFIX)
public class RoutingHealthProperties {
    /** The prefix of the health contributor's properties. */
    public static final String PREFIX = "management.health.hibernate-routing";

    /**
     * Whether a replica that cannot serve reads is {@code DOWN}, which makes the overall health
     * {@code DOWN} (HTTP 503) although every request is still served by the other replicas or the
     * primary. Off by default: such a replica is {@code DEGRADED}, a status that leaves the overall
     * health {@code UP} and answers HTTP 200, so load balancers and orchestrators keep the instance.
     */
    private boolean strict;

    public boolean isStrict() {
        return strict;
    }

    public void setStrict(boolean strict) {
        this.strict = strict;
    }
}
