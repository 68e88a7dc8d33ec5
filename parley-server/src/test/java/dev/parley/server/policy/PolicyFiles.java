package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Writing policy files the way an operator's tooling would, and reading the policy in force. */
final class PolicyFiles {
    private PolicyFiles() {
    }

    /** A rules file in JSON: each rule is {name, effect, when}. */
    static String json(List<Map<String, String>> rules) {
        try {
            return HubFixture.JSON.writeValueAsString(Map.of("rules", rules));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Map<String, String> deny(String name, String when) {
        return Map.of("name", name, "effect", "deny", "when", when);
    }

    static Map<String, String> allow(String name, String when) {
        return Map.of("name", name, "effect", "allow", "when", when);
    }

    /** Replaces the file in one step (write aside, then rename), so the watcher never reads half a file. */
    static void write(Path file, String content) {
        try {
            Path aside = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(aside, content, StandardCharsets.UTF_8);
            Files.move(aside, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode policy(HubFixture hub) {
        HubFixture.Resp r = hub.get(hub.admin(), "/v1/policy");
        assertEquals(200, r.status(), () -> "GET /v1/policy failed: " + r);
        return r.json();
    }

    static String version(HubFixture hub) {
        return policy(hub).get("version").asText();
    }

    /** Waits until the hub runs a version other than {@code old}, and returns it. */
    static String awaitNewVersion(HubFixture hub, String old) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> !version(hub).equals(old));
        return version(hub);
    }
}
