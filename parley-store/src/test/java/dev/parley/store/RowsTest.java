package dev.parley.store;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RowsTest {
    /** Ids from another gateway are only strings: whatever they hold comes back from the array as it was. */
    @Test
    void aJsonArrayCarriesEveryStringAsItIs() throws Exception {
        List<String> values = List.of("0193f0c4-7d1e-7000-8000-000000000001", "quote \" and backslash \\",
                "tab\tnew line\ncontrol \u0001", "ünïcödé ✓ 𝄞", "");
        assertEquals(values, new ObjectMapper().readValue(Rows.jsonArray(values, v -> v), new TypeReference<List<String>>() { }));
        assertEquals("[]", Rows.jsonArray(List.<String>of(), v -> v));
    }
}
