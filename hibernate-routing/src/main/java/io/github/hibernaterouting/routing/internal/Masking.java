package io.github.hibernaterouting.routing.internal;

import java.util.Locale;

/** Removes secrets from JDBC URLs before they reach a log line, a metric or an exception message. */
public final class Masking {
    private Masking() {}

    /**
     * The URL with any {@code password=} parameter value and any {@code user:password@} user-info
     * password (or user-info without a colon, which Redis reads as a password) replaced by {@code ****}. Safe for any string, including {@code null}.
     */
    public static String url(String url) {
        if (url == null) {
            return null;
        }
        String masked = url;
        final int scheme = masked.indexOf("://");
        final int at = masked.indexOf('@');
        if (scheme >= 0 && at > scheme) {
            final int colon = masked.indexOf(':', scheme + 3);
            if (colon > 0 && colon < at) {
                masked = masked.substring(0, colon + 1) + "****" + masked.substring(at);
            } else {
                // user-info without a colon: Redis URIs read it as a password
                masked = masked.substring(0, scheme + 3) + "****" + masked.substring(at);
            }
        }
        final String lower = masked.toLowerCase(Locale.ROOT);
        final StringBuilder out = new StringBuilder(masked.length());
        int i = 0;
        while (i < masked.length()) {
            final int p = lower.indexOf("password=", i);
            if (p < 0 || (p > 0 && "?&;".indexOf(lower.charAt(p - 1)) < 0)) {
                if (p < 0) {
                    out.append(masked, i, masked.length());
                    break;
                }
                out.append(masked, i, p + 9);
                i = p + 9;
                continue;
            }
            out.append(masked, i, p + 9).append("****");
            int end = p + 9;
            while (end < masked.length() && "&;".indexOf(masked.charAt(end)) < 0) {
                end++;
            }
            i = end;
        }
        return out.toString();
    }
}
