package io.github.hibernaterouting.sample.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyToken;
import org.junit.jupiter.api.Test;

class AuthenticationFilterTest {
    @Test
    void token_ofPgLsnText_isThePosition() {
        assertThat(AuthenticationFilter.token("16/B374D848")).isEqualTo(ConsistencyToken.ofPosition(0x16B374D848L));
        assertThat(AuthenticationFilter.token("0/1517A48").toString()).isEqualTo("rl1.0000000001517a48");
        assertThat(AuthenticationFilter.token(null)).isNull();
    }
}
