package io.github.hibernaterouting.routing;

import io.github.hibernaterouting.routing.sql.internal.Masking;
import org.hibernate.HibernateException;

/**
 * A routing setting, hint or property has a value the library cannot use.
 *
 * <p>Thrown at bootstrap for settings, so a misconfigured persistence unit never starts; the
 * message names the key, the rejected value and what would be accepted. No secret reaches the
 * message: the value of a key named for a secret ({@code password}, {@code secret}, {@code token},
 * {@code key}) is masked, and so are credentials in every URL the message quotes.
 */
public class RoutingConfigurationException extends HibernateException {
    private static final long serialVersionUID = 1L;

    private final String key;

    /**
     * @param key the setting, hint or property name
     * @param value the rejected value; masked here if it could hold a secret
     * @param expected what would have been accepted, in words a user can act on
     */
    public RoutingConfigurationException(String key, String value, String expected) {
        super(Masking.text(
                "Invalid value '" + Masking.property(key, value) + "' for '" + key + "': expected " + expected));
        this.key = key;
    }

    private RoutingConfigurationException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /**
     * An exception with a message of its own.
     *
     * @param key the setting, hint or property name
     * @param message the complete message; it must name the key and the fix. Credentials in URLs it
     *     quotes are masked here
     */
    public static RoutingConfigurationException withMessage(String key, String message) {
        return new RoutingConfigurationException(key, Masking.text(message), (Throwable) null);
    }

    /** The setting, hint or property that was wrong. */
    public String getKey() {
        return key;
    }
}
