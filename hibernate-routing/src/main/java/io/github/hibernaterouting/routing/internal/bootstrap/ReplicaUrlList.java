package io.github.hibernaterouting.routing.internal.bootstrap;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits the value of {@code replica_urls} into URLs. A comma separates two URLs where the next one
 * starts with {@code jdbc:}; a comma inside a URL's host list ({@code jdbc:postgresql://s1,s2/app}) or
 * its parameters ({@code options=-c search_path=a,b}) belongs to that URL. Anywhere else the text after
 * the comma is an entry of its own, and one that is not a JDBC URL is refused by name.
 */
final class ReplicaUrlList {
    private ReplicaUrlList() {}

    /** The URLs in {@code raw}, trimmed, without empty entries, in order. */
    static List<String> split(String raw) {
        final List<String> urls = new ArrayList<>();
        StringBuilder current = null;
        for (String part : raw.split(",", -1)) {
            final String trimmed = part.trim();
            if (current == null || trimmed.startsWith("jdbc:") || !continues(current)) {
                if (current != null) {
                    add(urls, current);
                }
                current = new StringBuilder(trimmed);
            } else {
                current.append(',').append(part);
            }
        }
        if (current != null) {
            add(urls, current);
        }
        return urls;
    }

    /** Whether a comma after {@code url} so far can be part of it: in its host list or its parameters. */
    private static boolean continues(StringBuilder url) {
        final String prefix = "jdbc:postgresql://";
        if (url.indexOf("?") >= 0) {
            return true;
        }
        return url.indexOf(prefix) == 0 && url.indexOf("/", prefix.length()) < 0;
    }

    private static void add(List<String> urls, StringBuilder url) {
        // An empty entry (",," or a trailing comma) leaves a lone comma behind it.
        final String value = url.toString().trim();
        final String withoutTrailingCommas = value.replaceAll("[,\\s]+$", "");
        if (!withoutTrailingCommas.isEmpty()) {
            urls.add(withoutTrailingCommas);
        }
    }
}
