package dev.parley.trace.export;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OtlpSettingsTest {

    @Test
    void withNoEndpointExportIsOffAndEverythingHasItsDefault() {
        OtlpSettings settings = OtlpSettings.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "  "));
        assertFalse(settings.enabled());
        assertEquals(Optional.empty(), settings.tracesEndpoint());
        assertEquals("parley", settings.serviceName());
        assertEquals(Duration.ofSeconds(10), settings.timeout());
        assertEquals("none", settings.compression());
        assertEquals(Map.of(), settings.headers());
        assertThrows(OtlpSettingsException.class, () -> OtlpTraceExport.start(settings));
    }

    @Test
    void theSamplerKeepsWholeTracesByTheirIdAsOpenTelemetrysRatioSamplerDoes() {
        String low = "4bf92f3577b34da6" + "0000000000000001"; // low 64 bits tiny: under any ratio above 0
        String high = "4bf92f3577b34da6" + "7ffffffffffffff0"; // near the top: only under a ratio near 1
        OtlpSettings all = OtlpSettings.fromEnvironment(Map.of());
        assertTrue(all.sampled(low) && all.sampled(high), "always_on by default");
        OtlpSettings tenth = OtlpSettings.fromEnvironment(Map.of("OTEL_TRACES_SAMPLER", "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG", "0.1"));
        assertTrue(tenth.sampled(low));
        assertFalse(tenth.sampled(high));
        OtlpSettings none = OtlpSettings.fromEnvironment(Map.of("OTEL_TRACES_SAMPLER", "always_off"));
        assertFalse(none.sampled(low));
        assertTrue(assertThrows(OtlpSettingsException.class, () -> OtlpSettings.fromEnvironment(Map.of(
                "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "2")))
                .getMessage().startsWith("OTEL_TRACES_SAMPLER_ARG: a ratio from 0 to 1"));
        assertTrue(assertThrows(OtlpSettingsException.class, () -> OtlpSettings.fromEnvironment(Map.of(
                "OTEL_TRACES_SAMPLER", "jaeger_remote"))).getMessage().startsWith("OTEL_TRACES_SAMPLER:"));
    }

    @Test
    void theBaseEndpointGetsV1TracesAndTheTracesEndpointIsTakenAsItIs() {
        assertEquals(URI.create("https://cloud.langfuse.com/api/public/otel/v1/traces"), endpoint(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "https://cloud.langfuse.com/api/public/otel")));
        assertEquals(URI.create("http://localhost:4318/v1/traces"), endpoint(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318/")));
        assertEquals(URI.create("http://collector:9999/custom"), endpoint(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:9999/custom")));
    }

    @Test
    void headersArePercentDecodedKeepingPlusAndTracesHeadersWin() {
        OtlpSettings settings = OtlpSettings.fromEnvironment(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318",
                "OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20cGs6c2s+Lw==, x-tenant = blue ,,",
                "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-tenant=green"));
        assertEquals(Map.of("Authorization", "Basic cGs6c2s+Lw==", "x-tenant", "green"), settings.headers());
    }

    @Test
    void timeoutCompressionServiceNameAndResourceAttributesAreRead() {
        OtlpSettings settings = OtlpSettings.fromEnvironment(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318",
                "OTEL_EXPORTER_OTLP_TIMEOUT", "2500",
                "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "GZIP",
                "OTEL_RESOURCE_ATTRIBUTES", "service.name=from-resource,deployment.environment.name=prod"));
        assertEquals(Duration.ofMillis(2500), settings.timeout());
        assertEquals("gzip", settings.compression());
        assertEquals("from-resource", settings.serviceName(), "service.name in the resource attributes counts");
        assertEquals("prod", settings.resourceAttributes().get("deployment.environment.name"));
        assertEquals("hub-eu", OtlpSettings.fromEnvironment(Map.of("OTEL_SERVICE_NAME", "hub-eu",
                "OTEL_RESOURCE_ATTRIBUTES", "service.name=from-resource")).serviceName());
    }

    @Test
    void theSdkSwitchAndTheNoneExporterTurnExportOffWhateverElseIsSet() {
        Map<String, String> endpoint = Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318");
        assertTrue(OtlpSettings.fromEnvironment(endpoint).enabled());
        assertFalse(with(endpoint, "OTEL_SDK_DISABLED", "TRUE").enabled());
        assertFalse(with(endpoint, "OTEL_TRACES_EXPORTER", "none").enabled());
        assertTrue(with(endpoint, "OTEL_TRACES_EXPORTER", "otlp").enabled());
        assertTrue(with(endpoint, "OTEL_SDK_DISABLED", "false").enabled());
        assertFalse(with(endpoint, "OTEL_SDK_DISABLED", "true")
                .withOptions(Optional.of("http://other:4318"), List.of(), Optional.empty()).enabled());
    }

    @Test
    void optionsGoOnTopOfTheVariables() {
        OtlpSettings settings = OtlpSettings.fromEnvironment(Map.of(
                        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://env:4318/v1/traces",
                        "OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=2",
                        "OTEL_SERVICE_NAME", "from-env"))
                .withOptions(Optional.of("https://cloud.langfuse.com/api/public/otel"),
                        List.of("b=3", "Authorization=Basic%20eDp5"), Optional.of("from-option"));
        assertEquals(Optional.of(URI.create("https://cloud.langfuse.com/api/public/otel/v1/traces")),
                settings.tracesEndpoint());
        assertEquals(Map.of("a", "1", "b", "3", "Authorization", "Basic eDp5"), settings.headers());
        assertEquals("from-option", settings.serviceName());
        assertEquals(settings, settings.withOptions(Optional.empty(), List.of(), Optional.empty()));
    }

    @Test
    void aBadValueIsRefusedNamingTheVariableAndNeverEchoingAHeaderValue() {
        assertRefused("OTEL_EXPORTER_OTLP_ENDPOINT: an http:// or https:// URL with a host",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318");
        assertRefused("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: not a URL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://bad host/v1/traces");
        OtlpSettingsException userInfo = assertRefused("OTEL_EXPORTER_OTLP_ENDPOINT: credentials go in",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "https://pk:sk-secret@cloud.langfuse.com/api/public/otel");
        assertFalse(userInfo.getMessage().contains("sk-secret"));
        assertRefused("OTEL_EXPORTER_OTLP_TIMEOUT: milliseconds", "OTEL_EXPORTER_OTLP_TIMEOUT", "10s");
        assertRefused("OTEL_EXPORTER_OTLP_TIMEOUT: milliseconds", "OTEL_EXPORTER_OTLP_TIMEOUT", "-1");
        assertRefused("OTEL_EXPORTER_OTLP_PROTOCOL: parley exports OTLP over http/protobuf only",
                "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
        assertRefused("OTEL_TRACES_EXPORTER: parley exports traces with otlp, or none", "OTEL_TRACES_EXPORTER",
                "zipkin");
        assertRefused("OTEL_SDK_DISABLED: true or false", "OTEL_SDK_DISABLED", "yes");
        assertRefused("OTEL_EXPORTER_OTLP_COMPRESSION: gzip or none", "OTEL_EXPORTER_OTLP_COMPRESSION", "zstd");
        String secret = "Basic c2VjcmV0";
        OtlpSettingsException noEquals = assertRefused("OTEL_EXPORTER_OTLP_HEADERS: entries are key=value",
                "OTEL_EXPORTER_OTLP_HEADERS", "Authorization: " + secret);
        assertFalse(noEquals.getMessage().contains(secret));
        OtlpSettingsException badEscape = assertRefused("OTEL_EXPORTER_OTLP_HEADERS: entry 1 has a bad %-escape",
                "OTEL_EXPORTER_OTLP_HEADERS", "Authorization=" + secret + "%zz");
        assertFalse(badEscape.getMessage().contains(secret));
        OtlpSettingsException lineBreak = assertRefused("OTEL_EXPORTER_OTLP_HEADERS: the value of x has a line break",
                "OTEL_EXPORTER_OTLP_HEADERS", "x=" + secret + "%0d%0aHost:%20evil");
        assertFalse(lineBreak.getMessage().contains(secret));
        assertRefused("OTEL_EXPORTER_OTLP_HEADERS: \"bad name\" is not an HTTP header name",
                "OTEL_EXPORTER_OTLP_HEADERS", "bad name=1");
        OtlpSettings base = OtlpSettings.fromEnvironment(Map.of());
        assertTrue(assertThrows(OtlpSettingsException.class, () -> base.withOptions(Optional.of("ftp://x"), List.of(),
                Optional.empty())).getMessage().startsWith("--otlp-endpoint: "));
        assertTrue(assertThrows(OtlpSettingsException.class, () -> base.withOptions(Optional.empty(), List.of("x"),
                Optional.empty())).getMessage().startsWith("--otlp-header: "));
        assertTrue(assertThrows(OtlpSettingsException.class, () -> base.withOptions(Optional.empty(), List.of(),
                Optional.of(" "))).getMessage().startsWith("--service-name: "));
    }

    private static OtlpSettingsException assertRefused(String messageStart, String variable, String value) {
        OtlpSettingsException refused = assertThrows(OtlpSettingsException.class,
                () -> OtlpSettings.fromEnvironment(Map.of(variable, value)));
        assertTrue(refused.getMessage().startsWith(messageStart), refused.getMessage());
        return refused;
    }

    private static URI endpoint(Map<String, String> env) {
        return OtlpSettings.fromEnvironment(env).tracesEndpoint().orElseThrow();
    }

    private static OtlpSettings with(Map<String, String> env, String variable, String value) {
        Map<String, String> more = new java.util.HashMap<>(env);
        more.put(variable, value);
        return OtlpSettings.fromEnvironment(more);
    }
}
