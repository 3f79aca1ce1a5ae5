package io.github.hibernaterouting.routing.internal.bootstrap;

import static io.github.hibernaterouting.routing.PoolSettings.*;

import com.zaxxer.hikari.HikariConfig;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

/**
 * The lifetimes and timeouts of one kind of the library's own pools ({@code hibernate.routing.primary.*} or
 * {@code hibernate.routing.replica.*}). Unset, each is what {@code hibernate.hikari.*} gives, else HikariCP's default. HikariCP would silently replace a value outside its
 * bounds with its default, so such a value fails here, naming the key.
 */
record PoolTuning(
        Duration maxLifetime,
        Duration keepaliveTime,
        Duration idleTimeout,
        Duration leakDetectionThreshold,
        Duration validationTimeout) {

    static PoolTuning primary(Map<String, ?> settings, Properties hikari, Duration connectionTimeout) {
        return read(settings, hikari, connectionTimeout, PRIMARY_CONNECTION_TIMEOUT, PRIMARY_DEFAULTS, new String[] {
            PRIMARY_MAX_LIFETIME,
            PRIMARY_KEEPALIVE_TIME,
            PRIMARY_IDLE_TIMEOUT,
            PRIMARY_LEAK_DETECTION_THRESHOLD,
            PRIMARY_VALIDATION_TIMEOUT
        });
    }

    static PoolTuning replica(Map<String, ?> settings, Properties hikari, Duration connectionTimeout) {
        return read(settings, hikari, connectionTimeout, REPLICA_CONNECTION_TIMEOUT, REPLICA_DEFAULTS, new String[] {
            REPLICA_MAX_LIFETIME,
            REPLICA_KEEPALIVE_TIME,
            REPLICA_IDLE_TIMEOUT,
            REPLICA_LEAK_DETECTION_THRESHOLD,
            REPLICA_VALIDATION_TIMEOUT
        });
    }

    /** HikariCP's names of the five, in the order of the keys. */
    private static final String[] HIKARI_NAMES = {
        "maxLifetime", "keepaliveTime", "idleTimeout", "leakDetectionThreshold", "validationTimeout"
    };

    /** The defaults of the keys: HikariCP's (7.x), but a replica's validation timeout is below its connection timeout. */
    private static final String[] PRIMARY_DEFAULTS = {
        DEFAULT_PRIMARY_MAX_LIFETIME,
        DEFAULT_PRIMARY_KEEPALIVE_TIME,
        DEFAULT_PRIMARY_IDLE_TIMEOUT,
        DEFAULT_PRIMARY_LEAK_DETECTION_THRESHOLD,
        DEFAULT_PRIMARY_VALIDATION_TIMEOUT
    };

    private static final String[] REPLICA_DEFAULTS = {
        DEFAULT_REPLICA_MAX_LIFETIME,
        DEFAULT_REPLICA_KEEPALIVE_TIME,
        DEFAULT_REPLICA_IDLE_TIMEOUT,
        DEFAULT_REPLICA_LEAK_DETECTION_THRESHOLD,
        DEFAULT_REPLICA_VALIDATION_TIMEOUT
    };

    private static PoolTuning read(
            Map<String, ?> settings,
            Properties hikari,
            Duration connectionTimeout,
            String connectionTimeoutKey,
            String[] defaults,
            String[] keys) {
        final Object[] fallbacks = new Object[keys.length];
        for (int i = 0; i < keys.length; i++) {
            // hibernate.hikari.<name> (milliseconds) is the default of both kinds of pool, as for the sizes.
            final Object hikariValue = hikari.get(HIKARI_NAMES[i]);
            fallbacks[i] = hikariValue != null ? hikariValue : defaults[i];
        }
        final Duration maxLifetime = zeroOrAtLeast(settings, keys[0], fallbacks[0], Duration.ofSeconds(30), null, null);
        final Duration keepalive =
                zeroOrAtLeast(settings, keys[1], fallbacks[1], Duration.ofSeconds(30), maxLifetime, keys[0]);
        final Duration idle =
                zeroOrAtLeast(settings, keys[2], fallbacks[2], Duration.ofSeconds(10), maxLifetime, keys[0]);
        final Duration leak =
                zeroOrAtLeast(settings, keys[3], fallbacks[3], Duration.ofSeconds(2), maxLifetime, keys[0]);
        Duration validation = SettingValues.duration(settings, keys[4], fallbacks[4], Duration.ofMillis(250));
        if (validation.compareTo(connectionTimeout) >= 0 && SettingValues.string(settings, keys[4]) == null) {
            // hibernate.hikari.validationTimeout applies to every pool; a replica's short connection timeout wins.
            validation = connectionTimeout.dividedBy(2).compareTo(Duration.ofMillis(250)) < 0
                    ? Duration.ofMillis(250)
                    : connectionTimeout.dividedBy(2);
        }
        // A value given in the key must leave time to fail over; a default adapts to the connection timeout
        // (at its 250ms floor the validation timeout equals it: HikariCP's own floor is 250ms too).
        if (validation.compareTo(connectionTimeout) >= 0 && SettingValues.string(settings, keys[4]) != null) {
            throw new RoutingConfigurationException(
                    keys[4],
                    String.valueOf(settings.get(keys[4]) != null ? settings.get(keys[4]) : fallbacks[4]),
                    "a duration of at least 250ms and less than '" + connectionTimeoutKey + "' ("
                            + connectionTimeout.toMillis() + "ms)");
        }
        return new PoolTuning(maxLifetime, keepalive, idle, leak, validation);
    }

    /** 0, or at least {@code minimum} and (when {@code below} is given and not 0) less than {@code below}. */
    private static Duration zeroOrAtLeast(
            Map<String, ?> settings, String key, Object fallback, Duration minimum, Duration below, String belowKey) {
        final Duration value = SettingValues.duration(settings, key, fallback, Duration.ZERO);
        if (SettingValues.string(settings, key) == null) {
            // A default or a hibernate.hikari.* value: HikariCP applies its own rules to it, as before.
            return value;
        }
        final boolean tooLong = below != null && !below.isZero() && value.compareTo(below) >= 0;
        if (!value.isZero() && (value.compareTo(minimum) < 0 || tooLong)) {
            throw new RoutingConfigurationException(
                    key,
                    String.valueOf(settings.get(key) != null ? settings.get(key) : fallback),
                    "0 (off), or a duration of at least " + minimum.toSeconds() + "s"
                            + (below == null || below.isZero()
                                    ? ""
                                    : " and less than '" + belowKey + "' (" + below.toSeconds() + "s)"));
        }
        return value;
    }

    /** Sets all five: each is the routing key's value, else {@code hibernate.hikari.*}'s, else HikariCP's default. */
    void applyTo(HikariConfig hikari) {
        hikari.setMaxLifetime(maxLifetime.toMillis());
        hikari.setKeepaliveTime(keepaliveTime.toMillis());
        hikari.setIdleTimeout(idleTimeout.toMillis());
        hikari.setLeakDetectionThreshold(leakDetectionThreshold.toMillis());
        hikari.setValidationTimeout(validationTimeout.toMillis());
    }
}
