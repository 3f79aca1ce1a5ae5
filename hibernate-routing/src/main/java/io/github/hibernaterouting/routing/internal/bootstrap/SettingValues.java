package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Reads one setting's value in the forms the settings accept (a typed object, or text), and fails
 * with a {@link RoutingConfigurationException} that names the key, the value and what is allowed.
 * Blank counts as absent; an absent value is replaced by the default, which goes through the same
 * parsing, so a default written in {@code RoutingSettings} means exactly what the same text set by
 * a user means.
 */
final class SettingValues {
    private SettingValues() {}

    static String string(Map<String, ?> settings, String key) {
        final Object value = settings.get(key);
        if (value == null) {
            return null;
        }
        final String text = value.toString().trim();
        return text.isEmpty() ? null : text;
    }

    /** The value of {@code key}, or {@code fallback} if it is absent or blank. */
    private static Object raw(Map<String, ?> settings, String key, Object fallback) {
        final Object value = settings.get(key);
        return value == null || value.toString().isBlank() ? fallback : value;
    }

    static <E extends Enum<E>> E enumValue(Map<String, ?> settings, String key, Class<E> type, Object fallback) {
        final Object value = raw(settings, key, fallback);
        if (type.isInstance(value)) {
            return type.cast(value);
        }
        final String text = value.toString().trim();
        try {
            return Enum.valueOf(type, text.toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new RoutingConfigurationException(
                    key,
                    text,
                    "one of "
                            + Arrays.stream(type.getEnumConstants())
                                    .map(Enum::name)
                                    .collect(Collectors.joining(", ")));
        }
    }

    static boolean bool(Map<String, ?> settings, String key, Object fallback) {
        final Object value = raw(settings, key, fallback);
        if (value instanceof Boolean b) {
            return b;
        }
        final String text = value.toString().trim().toLowerCase(Locale.ROOT);
        return switch (text) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new RoutingConfigurationException(key, text, "true or false");
        };
    }

    static int integer(Map<String, ?> settings, String key, Object fallback, int minimum) {
        final Object value = raw(settings, key, fallback);
        final int parsed;
        try {
            parsed = value instanceof Number n
                    ? Math.toIntExact(n.longValue())
                    : Integer.parseInt(value.toString().trim());
        } catch (NumberFormatException | ArithmeticException e) {
            throw new RoutingConfigurationException(key, value.toString(), "a whole number of at least " + minimum);
        }
        if (parsed < minimum) {
            throw new RoutingConfigurationException(key, value.toString(), "a whole number of at least " + minimum);
        }
        return parsed;
    }

    static long bytes(Map<String, ?> settings, String key, Object fallback) {
        final Object value = raw(settings, key, fallback);
        final String expected = "a number of bytes of at least 0, optionally with kB, MB or GB (for example 16MB)";
        if (value instanceof Number n) {
            if (n.longValue() < 0) {
                throw new RoutingConfigurationException(key, value.toString(), expected);
            }
            return n.longValue();
        }
        final String text = value.toString().trim();
        final String lower = text.toLowerCase(Locale.ROOT);
        long multiplier = 1;
        String digits = lower;
        if (lower.endsWith("kb")) {
            multiplier = 1024;
            digits = lower.substring(0, lower.length() - 2);
        } else if (lower.endsWith("mb")) {
            multiplier = 1024 * 1024;
            digits = lower.substring(0, lower.length() - 2);
        } else if (lower.endsWith("gb")) {
            multiplier = 1024L * 1024 * 1024;
            digits = lower.substring(0, lower.length() - 2);
        } else if (lower.endsWith("b")) {
            digits = lower.substring(0, lower.length() - 1);
        }
        try {
            final long parsed = Long.parseLong(digits.trim());
            if (parsed < 0) {
                throw new RoutingConfigurationException(key, text, expected);
            }
            return Math.multiplyExact(parsed, multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new RoutingConfigurationException(key, text, expected);
        }
    }

    static Duration duration(Map<String, ?> settings, String key, Object fallback, Duration minimum) {
        final Object value = raw(settings, key, fallback);
        final Duration parsed = value instanceof Duration d
                ? d
                : parseDuration(key, value.toString().trim());
        if (parsed.isNegative() || parsed.compareTo(minimum) < 0 && !(parsed.isZero() && minimum.isZero())) {
            throw new RoutingConfigurationException(
                    key,
                    value.toString(),
                    "a duration of at least " + minimum.toMillis() + "ms, such as 500ms, 5s or PT5S");
        }
        return parsed;
    }

    /** Parses {@code PT5S}, {@code 250ms}, {@code 5s}, {@code 2m}, {@code 1h} or a bare number of milliseconds. */
    static Duration parseDuration(String key, String text) {
        final String expected = "a duration such as 500ms, 5s, 2m or PT5S";
        final String lower = text.toLowerCase(Locale.ROOT);
        try {
            if (lower.startsWith("pt") || lower.startsWith("p")) {
                return Duration.parse(text.toUpperCase(Locale.ROOT));
            }
            if (lower.endsWith("ms")) {
                return Duration.ofMillis(
                        Long.parseLong(lower.substring(0, lower.length() - 2).trim()));
            }
            if (lower.endsWith("s")) {
                return Duration.ofMillis(Math.round(Double.parseDouble(
                                lower.substring(0, lower.length() - 1).trim())
                        * 1000));
            }
            if (lower.endsWith("m")) {
                return Duration.ofMinutes(
                        Long.parseLong(lower.substring(0, lower.length() - 1).trim()));
            }
            if (lower.endsWith("h")) {
                return Duration.ofHours(
                        Long.parseLong(lower.substring(0, lower.length() - 1).trim()));
            }
            return Duration.ofMillis(Long.parseLong(lower));
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new RoutingConfigurationException(key, text, expected);
        }
    }
}
