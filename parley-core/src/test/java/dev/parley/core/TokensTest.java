package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class TokensTest {
    private final NodeId lead = NodeId.of("lead");

    @Test
    void mintedTokensCarry256RandomBits() {
        String token = Tokens.mint("pn_");
        assertEquals(32, Base64.getUrlDecoder().decode(token.substring(3)).length);
        assertNotEquals(token, Tokens.mint("pn_"));
        assertFalse(Tokens.hash(token).contains(token.substring(3)));
    }

    @Test
    void resolvesAdminAndNodesAndNothingElse() {
        String nodeToken = Tokens.mint("pn_");
        Tokens tokens = new Tokens("pa_admin", Map.of(lead, Tokens.hash(nodeToken)));
        assertEquals(Optional.of(new Principal.Admin()), tokens.authenticate("pa_admin"));
        assertEquals(Optional.of(new Principal.Caller(lead)), tokens.authenticate(nodeToken));
        assertEquals(Optional.empty(), tokens.authenticate(nodeToken + "x"));
        assertEquals(Optional.empty(), tokens.authenticate(""));
        assertEquals(Optional.empty(), tokens.authenticate("x".repeat(10_000)));
    }

    @Test
    void rebindingInvalidatesTheOldTokenAndRevokingAll() {
        String first = Tokens.mint("pn_");
        String second = Tokens.mint("pn_");
        Tokens tokens = new Tokens("pa_admin", Map.of(lead, Tokens.hash(first)));
        tokens.bind(lead, Tokens.hash(second));
        assertEquals(Optional.empty(), tokens.authenticate(first));
        assertEquals(Optional.of(new Principal.Caller(lead)), tokens.authenticate(second));
        tokens.revoke(lead);
        assertEquals(Optional.empty(), tokens.authenticate(second));
    }
}
