package io.github.hibernaterouting.routing.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.sql.SqlClassifier;
import org.junit.jupiter.api.Test;

/**
 * What a routed connection records of the settings that ran on it, the part of carrying them
 * over that needs no server (the carrying itself is tested against a real cluster in
 * {@code CarriedSettingsIT}, module hibernate-routing-it).
 */
class CarriedSettingsTest {
    private final SqlClassifier classifier = SqlClassifier.builtIn();
    private final CarriedSettings settings = new CarriedSettings();

    /** A setting ran outside a transaction, on no bound connection. */
    private void ran(String sql) {
        settings.ran(sql, classifier.classify(sql), false, false, false);
    }

    @Test
    void theSameParameterSetAgainRightAfter_replacesTheOlderValue() {
        for (int i = 0; i < 1000; i++) {
            ran("set app.counter = " + i);
        }
        assertThat(settings.sql()).containsExactly("set app.counter = 999");
    }

    @Test
    void anotherSettingInBetween_keepsBothInOrder() {
        ran("set role admin");
        ran("set app.a = 1");
        ran("set role app");
        ran("SET app.a = 2");
        ran("set app.b = 1");
        ran("set APP.B = 2");
        assertThat(settings.sql())
                .containsExactly("set role admin", "set app.a = 1", "set role app", "SET app.a = 2", "set APP.B = 2");
    }

    @Test
    void differentParametersUnderOnePrefix_areNotTheSame() {
        ran("set app.tenant = 'a'");
        ran("set app.mode = 'b'");
        ran("reset app.mode");
        assertThat(settings.sql()).containsExactly("set app.tenant = 'a'", "reset app.mode");
    }

    @Test
    void aScriptIsNeverReplaced_sinceItMaySetMoreThanOneParameter() {
        ran("set app.a = 1; set app.b = 1");
        ran("set app.a = 2");
        assertThat(settings.sql()).containsExactly("set app.a = 1; set app.b = 1", "set app.a = 2");
    }

    @Test
    void setLocalOutsideATransaction_isNotRecorded_sinceItHasNoEffect() {
        ran("set local app.a = 1");
        assertThat(settings.sql()).isEmpty();
    }
}
