package io.github.hibernaterouting.sample.boot;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * HTTP basic authentication with two demo users, alice and bob (passwords alice-pw and bob-pw). The
 * starter's read-your-writes filter runs after this filter chain and takes the authenticated user
 * as the actor. Health is open; everything else needs a user.
 */
@Configuration(proxyBeanMethods = false)
public class SecurityConfiguration {
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(requests -> requests.requestMatchers("/actuator/health/**")
                        .permitAll()
                        .anyRequest()
                        .authenticated())
                .httpBasic(Customizer.withDefaults())
                // An API for curl, without browser sessions: no CSRF tokens.
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
}
