package io.github.hibernaterouting.routing.servlet;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Configuration errors fail the filter's initialisation, naming what to fix. */
class ReadYourWritesFilterTest {
    private static FilterConfig config(Map<String, String> params, Object emfAttribute) {
        final ServletContext context = (ServletContext) Proxy.newProxyInstance(
                ServletContext.class.getClassLoader(),
                new Class<?>[] {ServletContext.class},
                (proxy, method, args) -> method.getName().equals("getAttribute") ? emfAttribute : null);
        return new FilterConfig() {
            @Override
            public String getFilterName() {
                return "routing";
            }

            @Override
            public ServletContext getServletContext() {
                return context;
            }

            @Override
            public String getInitParameter(String name) {
                return params.get(name);
            }

            @Override
            public Enumeration<String> getInitParameterNames() {
                return Collections.enumeration(params.keySet());
            }
        };
    }

    @Test
    void missingEntityManagerFactory_failsInitNamingTheAttribute() {
        assertThatThrownBy(() -> new ReadYourWritesFilter().init(config(Map.of(), null)))
                .isInstanceOf(ServletException.class)
                .hasMessageContaining(ReadYourWritesFilter.ENTITY_MANAGER_FACTORY)
                .hasMessageContaining("it is not set");
        assertThatThrownBy(() -> new ReadYourWritesFilter().init(config(Map.of(), "a string")))
                .hasMessageContaining("java.lang.String");
    }

    @Test
    void badRule_failsInitNamingTheRuleAndTheForm() {
        assertThatThrownBy(() -> new ReadYourWritesFilter()
                        .init(config(Map.of("rules", "GET /auth/**=PRIMARY, /reports/*=FAST"), null)))
                .isInstanceOf(ServletException.class)
                .hasMessageContaining("'/reports/*=FAST'")
                .hasMessageContaining("[METHOD] /path/pattern=STRATEGY");
    }

    @Test
    void unknownInitParam_failsInitListingTheKnownOnes() {
        assertThatThrownBy(() -> new ReadYourWritesFilter().init(config(Map.of("rule", "/x=PRIMARY"), null)))
                .isInstanceOf(ServletException.class)
                .hasMessageContaining("'rule'")
                .hasMessageContaining("actor-resolver, consistency-cookie, consistency-cookie-max-age, "
                        + "consistency-cookie-secure, mutation-buffer-limit, require-actor, rules");
    }

    @Test
    void mutationBufferLimitThatIsNotASize_failsInitNamingTheInitParamAndTheForm() {
        for (String bad : java.util.List.of("lots", "-1", "1GBB", "4GB", "99999999999")) {
            assertThatThrownBy(
                            () -> new ReadYourWritesFilter().init(config(Map.of("mutation-buffer-limit", bad), null)))
                    .as(bad)
                    .isInstanceOf(ServletException.class)
                    .hasMessageContaining("'mutation-buffer-limit'")
                    .hasMessageContaining("512kB");
        }
    }

    @Test
    void actorResolverThatIsNotOne_failsInit() {
        assertThatThrownBy(() ->
                        new ReadYourWritesFilter().init(config(Map.of("actor-resolver", "java.lang.Object"), null)))
                .hasMessageContaining("does not implement");
        assertThatThrownBy(() ->
                        new ReadYourWritesFilter().init(config(Map.of("actor-resolver", "com.example.Missing"), null)))
                .hasMessageContaining("cannot create com.example.Missing");
    }

    @Test
    void requireActor_acceptsOnlyTrueOrFalse() {
        assertThatThrownBy(() -> new ReadYourWritesFilter().init(config(Map.of("require-actor", "yes"), null)))
                .hasMessageContaining("'require-actor'")
                .hasMessageContaining("'true' or 'false'");
    }

    @Test
    void badRuleGivenInCode_failsAtOnce() {
        assertThatThrownBy(() -> new ReadYourWritesFilter().rules("POST /x=STALE_READ"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mutations");
    }

    @Test
    void consistencyCookieNameThatIsNotACookieName_failsInitNamingTheInitParamAndTheForm() {
        for (String bad : java.util.List.of("", "rl token", "rl;x", "rl=x", "x".repeat(101), "r\u00e9")) {
            assertThatThrownBy(() -> new ReadYourWritesFilter().init(config(Map.of("consistency-cookie", bad), null)))
                    .as(bad)
                    .isInstanceOf(ServletException.class)
                    .hasMessageContaining("'consistency-cookie'")
                    .hasMessageContaining("such as rl-consistency");
        }
    }

    @Test
    void consistencyCookieMaxAgeOutsideOneSecondToADay_failsInitNamingTheInitParamAndTheRange() {
        for (String bad : java.util.List.of("0", "-1", "60s", "86401", "999999")) {
            assertThatThrownBy(() -> new ReadYourWritesFilter()
                            .init(config(
                                    Map.of("consistency-cookie", "rl-consistency", "consistency-cookie-max-age", bad),
                                    null)))
                    .as(bad)
                    .isInstanceOf(ServletException.class)
                    .hasMessageContaining("'consistency-cookie-max-age'")
                    .hasMessageContaining("1 to 86400");
        }
    }

    @Test
    void consistencyCookieSecure_acceptsOnlyTrueOrFalse() {
        assertThatThrownBy(() -> new ReadYourWritesFilter()
                        .init(config(
                                Map.of("consistency-cookie", "rl-consistency", "consistency-cookie-secure", "yes"),
                                null)))
                .hasMessageContaining("'consistency-cookie-secure'")
                .hasMessageContaining("'true' or 'false'");
    }

    @Test
    void consistencyCookieOptionsWithoutTheCookiesName_failInitSayingTheyHaveNoEffect() {
        for (String option : java.util.List.of("consistency-cookie-max-age", "consistency-cookie-secure")) {
            assertThatThrownBy(() -> new ReadYourWritesFilter().init(config(Map.of(option, "60"), null)))
                    .as(option)
                    .hasMessageContaining("'" + option + "'")
                    .hasMessageContaining("no effect without 'consistency-cookie'");
        }
    }

    @Test
    void validConsistencyCookieOptions_passInitUpToThePersistenceUnit() {
        assertThatThrownBy(() -> new ReadYourWritesFilter()
                        .init(config(
                                Map.of(
                                        "consistency-cookie", "__Host-rl",
                                        "consistency-cookie-max-age", "86400",
                                        "consistency-cookie-secure", "true"),
                                null)))
                .as("the only complaint is the missing EntityManagerFactory")
                .hasMessageContaining(ReadYourWritesFilter.ENTITY_MANAGER_FACTORY);
    }
}
