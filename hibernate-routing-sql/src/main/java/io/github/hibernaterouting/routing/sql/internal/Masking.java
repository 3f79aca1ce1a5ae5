package io.github.hibernaterouting.routing.sql.internal;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Removes secrets from URLs, settings and exception messages before they reach a log line, a meter,
 * a status page or an exception message: the one masker of the library, the audit tool and the
 * sample (it lives here because this module is the one all three depend on, and it needs nothing).
 *
 * <p>A secret is the value of every parameter whose name contains {@code password}, {@code secret},
 * {@code token} or {@code key}, in any case ({@code password=}, {@code sslpassword=}, {@code apiKey=},
 * {@code authToken=}, {@code client_secret=}), in a query string ({@code ?a=1&b=2}), in a
 * {@code ;}-separated form ({@code ;a=1;b=2}) or in a list such as {@code Properties.toString()}; and the
 * password of any user-info ({@code scheme://user:password@host}; user-info without a colon, which
 * Redis reads as a password, entirely). Each is replaced by {@value #MASK}. Not supported API: it may
 * change in any release. Stateless and thread-safe.
 */
public final class Masking {
    /** What a secret is replaced with. */
    public static final String MASK = "****";

    private static final String SECRET_WORDS = "password|secret|token|key";

    /** User-info of a URL with a scheme: everything up to the last {@code @} before the path, query or end. */
    private static final Pattern USER_INFO =
            Pattern.compile("(?i)([a-z][a-z0-9+.\\-]*://)([^\\s/?#'\"<>@]*(?:@[^\\s/?#'\"<>@]*)*)@");

    /** {@code name=value} where the name holds a secret word, after a start or a separator. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)(^|[?&;\\s,{(\\[])([\\w.\\-]*(?:" + SECRET_WORDS + ")[\\w.\\-]*=)([^&;\\s,})\\]'\"#]*)");

    private static final Pattern SECRET_NAME = Pattern.compile("(?i).*(?:" + SECRET_WORDS + ").*");

    private Masking() {}

    /**
     * {@code text} (a URL, a list of URLs, an exception message, any text) with the value of every
     * parameter named for a secret and the password of every user-info replaced by {@value #MASK}.
     * Safe for any string, including {@code null}.
     */
    public static String text(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        final Matcher userInfo = USER_INFO.matcher(text);
        final StringBuilder out = new StringBuilder(text.length());
        while (userInfo.find()) {
            final String info = userInfo.group(2);
            final int colon = info.indexOf(':');
            final String masked = colon >= 0 ? info.substring(0, colon + 1) + MASK : MASK;
            userInfo.appendReplacement(out, Matcher.quoteReplacement(userInfo.group(1) + masked + "@"));
        }
        userInfo.appendTail(out);
        final Matcher parameter = SECRET_PARAMETER.matcher(out);
        final StringBuilder masked = new StringBuilder(out.length());
        while (parameter.find()) {
            parameter.appendReplacement(
                    masked,
                    Matcher.quoteReplacement(parameter.group(1)
                            + parameter.group(2)
                            + (parameter.group(3).isEmpty() ? "" : MASK)));
        }
        parameter.appendTail(masked);
        return masked.toString();
    }

    /** A URL (JDBC, Redis, any), masked as {@link #text} does; {@code null} stays {@code null}. */
    public static String url(String url) {
        return text(url);
    }

    /**
     * A setting's value for a message: {@value #MASK} if the key's name holds a secret word
     * ({@link #isSecretName}), else the value's text with its URLs masked.
     */
    public static String property(String key, Object value) {
        if (value == null) {
            return null;
        }
        return key != null && isSecretName(key) ? MASK : text(String.valueOf(value));
    }

    /** Whether a parameter or setting name holds {@code password}, {@code secret}, {@code token} or {@code key}. */
    public static boolean isSecretName(String name) {
        return SECRET_NAME.matcher(name).matches();
    }

    /**
     * Whether {@code url} has user-info ({@code scheme://user:password@host}). pgjdbc does not read it: it
     * would take it for a host name, and print it; callers refuse such JDBC URLs.
     */
    public static boolean hasUserInfo(String url) {
        return url != null && USER_INFO.matcher(url).find();
    }

    /**
     * {@code thrown} itself if no message of its chain (causes and suppressed exceptions) holds a
     * secret; else a copy of the chain in which every message is masked ({@link MaskedException}s with
     * the original class names and stack traces). For exceptions of other libraries that quote a URL,
     * such as HikariCP's, before they are thrown on or logged.
     */
    public static Throwable exception(Throwable thrown) {
        return holdsSecret(thrown, 0) ? copy(thrown, 0) : thrown;
    }

    /** {@link #exception} for a {@code RuntimeException}, which it stays. */
    public static RuntimeException exception(RuntimeException thrown) {
        return holdsSecret(thrown, 0) ? copy(thrown, 0) : thrown;
    }

    private static boolean holdsSecret(Throwable thrown, int depth) {
        if (thrown == null || depth > 20) {
            return false;
        }
        final String message = thrown.getMessage();
        if (message != null && !text(message).equals(message)) {
            return true;
        }
        for (Throwable suppressed : thrown.getSuppressed()) {
            if (holdsSecret(suppressed, depth + 1)) {
                return true;
            }
        }
        return thrown.getCause() != thrown && holdsSecret(thrown.getCause(), depth + 1);
    }

    private static MaskedException copy(Throwable thrown, int depth) {
        final Throwable cause = thrown.getCause();
        final MaskedException copy = new MaskedException(
                thrown, cause == null || cause == thrown || depth > 20 ? null : copy(cause, depth + 1));
        for (Throwable suppressed : thrown.getSuppressed()) {
            copy.addSuppressed(copy(suppressed, depth + 1));
        }
        return copy;
    }

    /**
     * A copy of an exception whose message (or a message of its chain) held a secret: its message is
     * the original class name and the masked message, its stack trace the original's.
     */
    public static final class MaskedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        private final String originalClass;

        MaskedException(Throwable original, Throwable maskedCause) {
            super(
                    original.getClass().getName()
                            + (original.getMessage() == null ? "" : ": " + text(original.getMessage())),
                    maskedCause);
            this.originalClass = original.getClass().getName();
            setStackTrace(original.getStackTrace());
        }

        /** The class name of the exception this one copies. */
        public String originalClass() {
            return originalClass;
        }
    }
}
