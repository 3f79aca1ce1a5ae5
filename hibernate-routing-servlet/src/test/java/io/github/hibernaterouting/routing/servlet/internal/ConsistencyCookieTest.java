package io.github.hibernaterouting.routing.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders.InvalidHeaderException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading the consistency cookie strictly, and the attributes of the cookie the filter sets. */
class ConsistencyCookieTest {
    private static final String LOW = "rl1.0000000003000060";
    private static final String HIGH = "rl1.0000000003000a28";

    private final ConsistencyCookie cookie = new ConsistencyCookie("rl-consistency", 60, false);

    private static HttpServletRequest request(String contextPath, boolean secure) {
        return (HttpServletRequest) Proxy.newProxyInstance(
                HttpServletRequest.class.getClassLoader(),
                new Class<?>[] {HttpServletRequest.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getContextPath" -> contextPath;
                    case "isSecure" -> secure;
                    default -> null;
                });
    }

    /** The cookies a response was given. */
    private static HttpServletResponse response(List<Cookie> added) {
        return (HttpServletResponse) Proxy.newProxyInstance(
                HttpServletResponse.class.getClassLoader(),
                new Class<?>[] {HttpServletResponse.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("addCookie")) {
                        added.add((Cookie) args[0]);
                    }
                    return null;
                });
    }

    private Cookie set(ConsistencyCookie consistencyCookie, String contextPath, boolean secure) {
        final List<Cookie> added = new ArrayList<>();
        consistencyCookie.set(request(contextPath, secure), response(added), ConsistencyToken.parse(HIGH));
        assertThat(added).hasSize(1);
        return added.get(0);
    }

    @Test
    void noCookieOrOnlyOthers_isNoToken() throws InvalidHeaderException {
        assertThat(cookie.token(null)).isNull();
        assertThat(cookie.token(new Cookie[0])).isNull();
        assertThat(cookie.token(new Cookie[] {new Cookie("JSESSIONID", "abc"), new Cookie("RL-CONSISTENCY", LOW)}))
                .as("cookie names are case-sensitive")
                .isNull();
    }

    @Test
    void severalCookiesOfTheName_theLatestPositionCounts() throws InvalidHeaderException {
        assertThat(cookie.token(new Cookie[] {
                    new Cookie("rl-consistency", HIGH),
                    new Cookie("JSESSIONID", "abc"),
                    new Cookie("rl-consistency", LOW)
                }))
                .isEqualTo(ConsistencyToken.parse(HIGH));
    }

    @Test
    void oneMalformedAmongSeveral_isRefusedNamingTheCookieAndTheRecovery() {
        assertThatThrownBy(() -> cookie.token(
                        new Cookie[] {new Cookie("rl-consistency", HIGH), new Cookie("rl-consistency", "0/3000060")}))
                .isInstanceOfSatisfying(
                        InvalidHeaderException.class,
                        e -> assertThat(e.header()).isEqualTo("Cookie"))
                .hasMessageContaining("Invalid consistency cookie rl-consistency='0/3000060'")
                .hasMessageContaining("'rl1.' followed by 16 hexadecimal digits")
                .hasMessageContaining("This answer clears the cookie: repeat the request");
        assertThatThrownBy(() -> cookie.token(new Cookie[] {new Cookie("rl-consistency", "")}))
                .hasMessageContaining("rl-consistency=''");
        assertThatThrownBy(() -> cookie.token(new Cookie[] {new Cookie("rl-consistency", "rl1.ffffffffffffffff")}))
                .hasMessageContaining("top bit");
    }

    @Test
    void hugeOrHostileValue_isEchoedShortAndPrintableOnly() {
        final String hostile = "rl1.\r\nSet-Cookie: x=y" + "A".repeat(8_000);
        assertThatThrownBy(() -> cookie.token(new Cookie[] {new Cookie("rl-consistency", hostile)}))
                .isInstanceOfSatisfying(
                        InvalidHeaderException.class,
                        e -> assertThat(e.getMessage())
                                .hasSizeLessThan(400)
                                .doesNotContain("\r", "\n")
                                .contains("...'"));
    }

    @Test
    void setCookie_isHttpOnlySameSiteLaxForTheApplicationsPath_withTheMaxAge() {
        final Cookie root = set(cookie, "", false);
        assertThat(root.getName()).isEqualTo("rl-consistency");
        assertThat(root.getValue()).isEqualTo(HIGH);
        assertThat(root.getPath()).isEqualTo("/");
        assertThat(root.getMaxAge()).isEqualTo(60);
        assertThat(root.isHttpOnly()).isTrue();
        assertThat(root.getAttribute("SameSite")).isEqualTo("Lax");
        assertThat(root.getSecure()).as("on a plain-HTTP request").isFalse();
        assertThat(root.getDomain()).as("host-only").isNull();
        assertThat(set(cookie, "/shop", false).getPath()).isEqualTo("/shop");
    }

    @Test
    void setCookie_isSecureOnASecureRequest_orAlwaysWhenAskedOrTheNameRequiresIt() {
        assertThat(set(cookie, "", true).getSecure()).isTrue();
        assertThat(set(new ConsistencyCookie("rl", 60, true), "", false).getSecure())
                .isTrue();
        assertThat(set(new ConsistencyCookie("__Secure-rl", 60, false), "/shop", false))
                .satisfies(c -> assertThat(c.getSecure()).isTrue())
                .satisfies(c -> assertThat(c.getPath()).isEqualTo("/shop"));
        assertThat(set(new ConsistencyCookie("__Host-rl", 60, false), "/shop", false))
                .as("browsers only keep a __Host- cookie that is Secure, for Path=/, without Domain")
                .satisfies(c -> assertThat(c.getSecure()).isTrue())
                .satisfies(c -> assertThat(c.getPath()).isEqualTo("/"));
    }

    @Test
    void clear_expiresTheCookieWithTheSameNameAndPath() {
        final List<Cookie> added = new ArrayList<>();
        cookie.clear(request("/shop", false), response(added));
        assertThat(added).singleElement().satisfies(c -> {
            assertThat(c.getName()).isEqualTo("rl-consistency");
            assertThat(c.getPath()).isEqualTo("/shop");
            assertThat(c.getMaxAge()).isZero();
            assertThat(c.getValue()).isEmpty();
        });
    }

    @Test
    void badNameOrMaxAge_isRefusedNamingIt() {
        assertThatThrownBy(() -> new ConsistencyCookie("rl consistency", 60, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'rl consistency' is not a cookie name");
        assertThatThrownBy(() -> new ConsistencyCookie("rl", 0, false)).hasMessageContaining("1 to 86400 seconds");
        assertThatThrownBy(() -> new ConsistencyCookie("rl", 86_401, false)).hasMessageContaining("not 86401");
    }
}
