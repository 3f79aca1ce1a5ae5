package io.github.hibernaterouting.routing.internal.bootstrap;

import static io.github.hibernaterouting.routing.RoutingSettings.DEFAULT_REDIS_ALLOW_SHORT_WINDOW;
import static io.github.hibernaterouting.routing.RoutingSettings.MAX_REPLICA_LAG;
import static io.github.hibernaterouting.routing.RoutingSettings.REDIS_ALLOW_SHORT_WINDOW;
import static io.github.hibernaterouting.routing.RoutingSettings.REDIS_WINDOW;
import static io.github.hibernaterouting.routing.internal.bootstrap.SettingValues.bool;
import static io.github.hibernaterouting.routing.internal.bootstrap.SettingValues.duration;
import static io.github.hibernaterouting.routing.internal.bootstrap.SettingValues.string;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.internal.replicas.LagBounds;
import java.time.Duration;
import java.util.Map;

/**
 * The Redis marker window. Once a marker expires, the lag bound is all that keeps a standby without
 * the actor's write from serving the actor; a standby passes that bound while what was last
 * measured of it, plus the age of the measurement, stays within {@link LagBounds#staleAfter} (see
 * {@code LagBounds.judge}). So the window is at least that, plus {@link #CLOCK_MARGIN}: by default,
 * and when it is set, unless {@code allow_short_window} says otherwise.
 */
final class MarkerWindow {
    /** What the window adds to the lag bound for the clocks: standbys measure their lag against the primary's commit times. */
    static final Duration CLOCK_MARGIN = Duration.ofSeconds(1);

    private static final Duration FLOOR = Duration.ofSeconds(10);

    private MarkerWindow() {}

    static Duration of(Map<String, ?> settings, boolean redis, Duration maxReplicaLag, Duration healthCheckInterval) {
        final Duration minimum = maxReplicaLag.isZero()
                ? Duration.ZERO
                : Duration.ofNanos(LagBounds.staleAfter(maxReplicaLag.toMillis(), healthCheckInterval.toMillis()))
                        .plus(CLOCK_MARGIN);
        if (string(settings, REDIS_WINDOW) == null) {
            return minimum.compareTo(FLOOR) > 0 ? minimum : FLOOR;
        }
        final Duration window = duration(settings, REDIS_WINDOW, null, Duration.ofMillis(100));
        if (redis
                && window.compareTo(minimum) < 0
                && !bool(settings, REDIS_ALLOW_SHORT_WINDOW, DEFAULT_REDIS_ALLOW_SHORT_WINDOW)) {
            throw new RoutingConfigurationException(
                    REDIS_WINDOW,
                    string(settings, REDIS_WINDOW),
                    "at least " + minimum.toMillis() + "ms: once a marker expires, only the lag bound keeps a"
                            + " replica without the actor's write from serving the actor, and it admits a replica"
                            + " up to " + minimum.minus(CLOCK_MARGIN).toMillis() + "ms behind ('" + MAX_REPLICA_LAG
                            + "', at least three health-check intervals and 1s), plus 1s for the servers' clocks."
                            + " Leave it unset, lengthen it, or lower '" + MAX_REPLICA_LAG + "'; '"
                            + REDIS_ALLOW_SHORT_WINDOW + "=true' accepts the gap (for tests)");
        }
        return window;
    }
}
