package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import com.zaxxer.hikari.HikariConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * What the starter reads from {@code hibernate.routing.*} itself: the replicas, from which it builds
 * one HikariCP pool each, and the web filter. Every other {@code hibernate.routing.*} property is a
 * setting of the library and goes to the persistence unit unchanged (see {@code RoutingSettings}).
 *
 * <p>The prefix is the library's own, not {@code spring.*} (which Spring Boot keeps for its own
 * properties): every key in the library's documentation works in {@code application.properties} as
 * it is written there.
 */
@ConfigurationProperties(HibernateRoutingProperties.PREFIX)
public class HibernateRoutingProperties {
    /** The prefix of every property. */
    public static final String PREFIX = "hibernate.routing";

    /**
     * JDBC URLs of the hot standbys, comma-separated; each gets a HikariCP pool with the credentials
     * of {@code replica_user}/{@code replica_password}, else of {@code spring.datasource}. The short
     * form of {@code replicas[n].url}; not both.
     */
    private List<String> replicaUrls = new ArrayList<>();

    /** User for replica connections that name none; default {@code spring.datasource.username}. */
    private String replicaUser;

    /** Password for replica connections that name none; default {@code spring.datasource.password}. */
    private String replicaPassword;

    /** The hot standbys, each in Spring Boot's {@code spring.datasource} style. */
    private List<Replica> replicas = new ArrayList<>();

    /** The read-your-writes filter for servlet web applications. */
    private final Web web = new Web();

    public List<String> getReplicaUrls() {
        return replicaUrls;
    }

    public void setReplicaUrls(List<String> replicaUrls) {
        this.replicaUrls = replicaUrls;
    }

    public String getReplicaUser() {
        return replicaUser;
    }

    public void setReplicaUser(String replicaUser) {
        this.replicaUser = replicaUser;
    }

    public String getReplicaPassword() {
        return replicaPassword;
    }

    public void setReplicaPassword(String replicaPassword) {
        this.replicaPassword = replicaPassword;
    }

    public List<Replica> getReplicas() {
        return replicas;
    }

    public void setReplicas(List<Replica> replicas) {
        this.replicas = replicas;
    }

    public Web getWeb() {
        return web;
    }

    /** One hot standby. */
    public static class Replica {
        /** JDBC URL of the standby. */
        private String url;

        /** Login user; default {@code hibernate.routing.replica_user}, then {@code spring.datasource.username}. */
        private String username;

        /** Login password; default {@code hibernate.routing.replica_password}, then {@code spring.datasource.password}. */
        private String password;

        /** Fully qualified JDBC driver class name; default: found by the URL. */
        private String driverClassName;

        /**
         * HikariCP settings of this replica's pool, as {@code spring.datasource.hikari.*}. The starter's
         * defaults differ from HikariCP's where a replica needs it: {@code connection-timeout} 1s (a dead
         * replica must fail over quickly), {@code minimum-idle} 1, {@code initialization-fail-timeout} -1
         * (a replica that is down at startup does not stop the application), {@code read-only} true.
         */
        @NestedConfigurationProperty
        private final HikariConfig hikari = replicaPoolDefaults();

        public String getUrl() {
            return url;
        }

        public void setUrl(String url) {
            this.url = url;
        }

        public String getUsername() {
            return username;
        }

        public void setUsername(String username) {
            this.username = username;
        }

        public String getPassword() {
            return password;
        }

        public void setPassword(String password) {
            this.password = password;
        }

        public String getDriverClassName() {
            return driverClassName;
        }

        public void setDriverClassName(String driverClassName) {
            this.driverClassName = driverClassName;
        }

        public HikariConfig getHikari() {
            return hikari;
        }

        /** HikariCP's defaults, except where a replica's pool needs others; properties bound later override them. */
        static HikariConfig replicaPoolDefaults() {
            final HikariConfig config = new HikariConfig();
            config.setConnectionTimeout(1_000);
            config.setMinimumIdle(1);
            config.setInitializationFailTimeout(-1);
            config.setReadOnly(true);
            return config;
        }
    }

    /** The read-your-writes filter. */
    public static class Web {
        /** Whether to register the read-your-writes filter in a servlet web application. */
        private boolean enabled = true;

        /**
         * Order of the filter; default: right after Spring Security's filter chain
         * ({@code spring.security.filter.order} + 1), so that the request's user is known.
         */
        private Integer filterOrder;

        /**
         * Endpoint rules for safe methods, {@code [METHOD] /path/pattern=STRATEGY}, comma-separated, as the
         * servlet filter's {@code rules} init-param.
         */
        private String rules;

        /** Whether requests without an authenticated user are answered with 401. */
        private boolean requireActor;

        /** The consistency cookie: read-your-writes for clients without a user (off unless it has a name). */
        private final ConsistencyCookie consistencyCookie = new ConsistencyCookie();

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Integer getFilterOrder() {
            return filterOrder;
        }

        public void setFilterOrder(Integer filterOrder) {
            this.filterOrder = filterOrder;
        }

        public String getRules() {
            return rules;
        }

        public void setRules(String rules) {
            this.rules = rules;
        }

        public boolean isRequireActor() {
            return requireActor;
        }

        public void setRequireActor(boolean requireActor) {
            this.requireActor = requireActor;
        }

        public ConsistencyCookie getConsistencyCookie() {
            return consistencyCookie;
        }
    }

    /**
     * The servlet filter's consistency cookie, as its {@code consistency-cookie*} init-params: after a
     * mutation that committed, the commit's token in a cookie, honoured on later requests like the
     * {@code X-Consistency-Token} header.
     */
    public static class ConsistencyCookie {
        /** Name of the cookie, such as rl-consistency; switches the cookie on. Default: none (off). */
        private String name;

        /** The cookie's Max-Age, whole seconds from 1 s to 1 d (1 day). Takes effect with a name. */
        private Duration maxAge = Duration.ofSeconds(60);

        /**
         * Whether the cookie is always marked Secure; false: only on responses to secure requests (behind a
         * TLS-terminating proxy, with server.forward-headers-strategy set). Takes effect with a name.
         */
        private boolean secure;

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public Duration getMaxAge() {
            return maxAge;
        }

        public void setMaxAge(Duration maxAge) {
            this.maxAge = maxAge;
        }

        public boolean isSecure() {
            return secure;
        }

        public void setSecure(boolean secure) {
            this.secure = secure;
        }
    }
}
