package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.TestApplication;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.Note;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteRepository;
import io.github.hibernaterouting.testkit.PostgresCluster;
import java.util.Map;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/** A Spring MVC application with Spring Security's basic authentication, Spring Data JPA and Actuator. */
@SpringBootApplication(scanBasePackageClasses = {WebTestApplication.class, Note.class})
@EntityScan(basePackageClasses = Note.class)
@EnableJpaRepositories(basePackageClasses = NoteRepository.class)
public class WebTestApplication {
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(requests -> requests.requestMatchers("/actuator/**")
                        .permitAll()
                        .anyRequest()
                        .authenticated())
                .httpBasic(Customizer.withDefaults())
                .csrf(csrf -> csrf.disable())
                .build();
    }

    @Bean
    InMemoryUserDetailsManager users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice")
                        .password("{noop}alice-pw")
                        .roles("USER")
                        .build(),
                User.withUsername("bob").password("{noop}bob-pw").roles("USER").build());
    }

    /** Starts the application on a free port with {@code overrides} on top of the test properties. */
    public static ConfigurableApplicationContext start(PostgresCluster cluster, Map<String, Object> overrides) {
        final Map<String, Object> properties = TestApplication.properties(cluster);
        properties.put("server.port", "0");
        properties.put("management.endpoints.web.exposure.include", "health");
        properties.put("management.endpoint.health.show-details", "always");
        properties.putAll(overrides);
        return new SpringApplicationBuilder(WebTestApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(properties)
                .run();
    }

    /** The port the started application listens on. */
    public static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }
}
