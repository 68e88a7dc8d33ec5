package dev.parley.trace.export;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where and how traces are exported, read the way every OpenTelemetry SDK reads it: the standard
 * {@code OTEL_*} environment variables (OTLP/HTTP protobuf only), then {@code parley serve}'s
 * options on top. Export is off unless an endpoint is configured, and off whatever else is set
 * when {@code OTEL_SDK_DISABLED=true} or {@code OTEL_TRACES_EXPORTER=none}. A bad value is an
 * {@link OtlpSettingsException} naming the variable or option; header values are never echoed.
 *
 * @param tracesEndpoint the full URL spans are posted to ({@code …/v1/traces})
 * @param headers        sent with every export (e.g. {@code Authorization} for Langfuse)
 * @param timeout        for one export, retries included; zero means no limit
 * @param compression    {@code gzip} or {@code none}
 * @param serviceName    the {@code service.name} resource attribute
 * @param resourceAttributes further resource attributes ({@code OTEL_RESOURCE_ATTRIBUTES})
 * @param disabled       turned off by {@code OTEL_SDK_DISABLED} or {@code OTEL_TRACES_EXPORTER=none}
 * @param sampleRatio    the share of traces exported ({@code OTEL_TRACES_SAMPLER}, {@code _ARG}), 0 to 1
 */
public record OtlpSettings(Optional<URI> tracesEndpoint, Map<String, String> headers, Duration timeout,
                           String compression, String serviceName, Map<String, String> resourceAttributes,
                           boolean disabled, double sampleRatio) {
    public static final String DEFAULT_SERVICE_NAME = "parley";
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    private static final String TRACES_PATH = "v1/traces";
    /** An HTTP header name (RFC 9110 token). */
    private static final Pattern TOKEN = Pattern.compile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$");

    public OtlpSettings {
        headers = Map.copyOf(headers);
        resourceAttributes = Map.copyOf(resourceAttributes);
        if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
            throw new OtlpSettingsException("OTEL_TRACES_SAMPLER_ARG: a ratio from 0 to 1 (got " + sampleRatio + ")");
        }
    }

    /**
     * Whether trace {@code traceId} is exported: by its id, as OpenTelemetry's
     * {@code TraceIdRatioBased} sampler decides (its low 64 bits under the ratio's share), so every
     * hub and SDK with the same ratio keeps or drops a whole conversation alike.
     */
    public boolean sampled(String traceId) {
        if (sampleRatio >= 1) {
            return true;
        }
        long bound = (long) (sampleRatio * Long.MAX_VALUE);
        return Math.abs(Long.parseUnsignedLong(traceId, 16, 32, 16)) < bound;
    }

    /** Export is on: an endpoint is configured and nothing turned it off. */
    public boolean enabled() {
        return !disabled && tracesEndpoint.isPresent();
    }

    /** The settings the variables in {@code env} give (an unset or empty variable is the default). */
    public static OtlpSettings fromEnvironment(Map<String, String> env) {
        boolean sdkDisabled = bool(env, "OTEL_SDK_DISABLED");
        boolean exporterNone = tracesExporterNone(env);
        for (String variable : List.of("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")) {
            value(env, variable).filter(p -> !p.equals("http/protobuf")).ifPresent(p -> {
                throw new OtlpSettingsException(variable + ": parley exports OTLP over http/protobuf only (got \""
                        + p + "\")");
            });
        }
        Optional<URI> endpoint = value(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                .map(url -> url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url))
                .or(() -> value(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
                        .map(base -> tracesUrl("OTEL_EXPORTER_OTLP_ENDPOINT", base)));
        Map<String, String> headers = new LinkedHashMap<>();
        value(env, "OTEL_EXPORTER_OTLP_HEADERS").ifPresent(h -> headers.putAll(headers("OTEL_EXPORTER_OTLP_HEADERS", h)));
        value(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
                .ifPresent(h -> headers.putAll(headers("OTEL_EXPORTER_OTLP_TRACES_HEADERS", h)));
        Duration timeout = value(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
                .map(t -> millis("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", t))
                .or(() -> value(env, "OTEL_EXPORTER_OTLP_TIMEOUT").map(t -> millis("OTEL_EXPORTER_OTLP_TIMEOUT", t)))
                .orElse(DEFAULT_TIMEOUT);
        String compression = value(env, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION")
                .map(c -> compression("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", c))
                .or(() -> value(env, "OTEL_EXPORTER_OTLP_COMPRESSION")
                        .map(c -> compression("OTEL_EXPORTER_OTLP_COMPRESSION", c)))
                .orElse("none");
        Map<String, String> resource = value(env, "OTEL_RESOURCE_ATTRIBUTES")
                .map(r -> pairs("OTEL_RESOURCE_ATTRIBUTES", r)).orElse(Map.of());
        String serviceName = value(env, "OTEL_SERVICE_NAME")
                .or(() -> Optional.ofNullable(resource.get("service.name")).filter(s -> !s.isBlank()))
                .orElse(DEFAULT_SERVICE_NAME);
        return new OtlpSettings(endpoint, headers, timeout, compression, serviceName, resource,
                sdkDisabled || exporterNone, sampleRatio(env));
    }

    /**
     * These settings with {@code parley serve}'s options on top: {@code --otlp-endpoint} is a base URL
     * like {@code OTEL_EXPORTER_OTLP_ENDPOINT} and wins over both endpoint variables; each
     * {@code --otlp-header key=value} adds or replaces a header; {@code --service-name} wins over
     * {@code OTEL_SERVICE_NAME}.
     */
    public OtlpSettings withOptions(Optional<String> endpoint, List<String> extraHeaders, Optional<String> service) {
        Map<String, String> merged = new LinkedHashMap<>(headers);
        extraHeaders.forEach(h -> merged.putAll(headers("--otlp-header", h)));
        Optional<String> name = service.map(String::strip);
        if (name.isPresent() && name.get().isEmpty()) {
            throw new OtlpSettingsException("--service-name: a name is required");
        }
        return new OtlpSettings(endpoint.map(base -> tracesUrl("--otlp-endpoint", base)).or(() -> tracesEndpoint),
                merged, timeout, compression, name.orElse(serviceName), resourceAttributes, disabled, sampleRatio);
    }

    /**
     * The share of traces kept: {@code OTEL_TRACES_SAMPLER} {@code always_on} (the default),
     * {@code always_off}, or {@code traceidratio} with {@code OTEL_TRACES_SAMPLER_ARG} (default 1);
     * the {@code parentbased_} forms decide the same, as a whole trace shares its id.
     */
    private static double sampleRatio(Map<String, String> env) {
        String sampler = value(env, "OTEL_TRACES_SAMPLER").orElse("parentbased_always_on");
        return switch (sampler) {
            case "always_on", "parentbased_always_on" -> 1.0;
            case "always_off", "parentbased_always_off" -> 0.0;
            case "traceidratio", "parentbased_traceidratio" -> value(env, "OTEL_TRACES_SAMPLER_ARG").map(arg -> {
                try {
                    double ratio = Double.parseDouble(arg);
                    if (ratio >= 0 && ratio <= 1) {
                        return ratio;
                    }
                } catch (NumberFormatException ignored) {
                    // said below
                }
                throw new OtlpSettingsException("OTEL_TRACES_SAMPLER_ARG: a ratio from 0 to 1 (got \"" + arg + "\")");
            }).orElse(1.0);
            default -> throw new OtlpSettingsException("OTEL_TRACES_SAMPLER: always_on, always_off, traceidratio or"
                    + " their parentbased_ forms (got \"" + sampler + "\")");
        };
    }

    /** A non-empty, stripped variable. */
    private static Optional<String> value(Map<String, String> env, String variable) {
        return Optional.ofNullable(env.get(variable)).map(String::strip).filter(v -> !v.isEmpty());
    }

    private static boolean bool(Map<String, String> env, String variable) {
        return value(env, variable).map(v -> switch (v.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new OtlpSettingsException(variable + ": true or false (got \"" + v + "\")");
        }).orElse(false);
    }

    private static boolean tracesExporterNone(Map<String, String> env) {
        Optional<String> exporters = value(env, "OTEL_TRACES_EXPORTER");
        if (exporters.isEmpty()) {
            return false;
        }
        List<String> names = Arrays.stream(exporters.get().split(",")).map(String::strip).filter(s -> !s.isEmpty())
                .toList();
        for (String name : names) {
            if (!name.equals("otlp") && !name.equals("none")) {
                throw new OtlpSettingsException("OTEL_TRACES_EXPORTER: parley exports traces with otlp, or none to "
                        + "turn export off (got \"" + name + "\")");
            }
        }
        return !names.contains("otlp");
    }

    /** The base URL plus {@code v1/traces}, as the OTLP exporter spec appends it. */
    private static URI tracesUrl(String source, String base) {
        URI checked = url(source, base);
        String text = checked.toString();
        return URI.create(text.endsWith("/") ? text + TRACES_PATH : text + "/" + TRACES_PATH);
    }

    private static URI url(String source, String text) {
        try {
            URI uri = new URI(text);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
                throw new OtlpSettingsException(source + ": an http:// or https:// URL with a host (got \"" + text
                        + "\")");
            }
            if (uri.getRawUserInfo() != null) {
                throw new OtlpSettingsException(source + ": credentials go in OTEL_EXPORTER_OTLP_HEADERS, not in the URL");
            }
            if (uri.getQuery() != null || uri.getFragment() != null) {
                throw new OtlpSettingsException(source + ": a URL without query or fragment (got \"" + text + "\")");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new OtlpSettingsException(source + ": not a URL (" + e.getReason() + ")");
        }
    }

    private static Map<String, String> headers(String source, String text) {
        Map<String, String> parsed = pairs(source, text);
        parsed.forEach((name, value) -> {
            if (!TOKEN.matcher(name).matches()) {
                throw new OtlpSettingsException(source + ": \"" + name + "\" is not an HTTP header name");
            }
            if (value.chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
                throw new OtlpSettingsException(source + ": the value of " + name + " has a line break");
            }
        });
        return parsed;
    }

    /**
     * {@code key=value,key=value} with keys and values percent-decoded (W3C Baggage style). A
     * {@code +} stays a {@code +}: base64 credentials carry it. Values are never echoed in errors.
     */
    private static Map<String, String> pairs(String source, String text) {
        Map<String, String> pairs = new LinkedHashMap<>();
        String[] entries = text.split(",");
        for (int i = 0; i < entries.length; i++) {
            String entry = entries[i].strip();
            if (entry.isEmpty()) {
                continue;
            }
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw new OtlpSettingsException(source + ": entries are key=value, comma-separated (entry " + (i + 1)
                        + " is not)");
            }
            pairs.put(decode(source, i, entry.substring(0, eq).strip()), decode(source, i, entry.substring(eq + 1).strip()));
        }
        return pairs;
    }

    private static String decode(String source, int index, String encoded) {
        try {
            return URLDecoder.decode(encoded.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new OtlpSettingsException(source + ": entry " + (index + 1) + " has a bad %-escape");
        }
    }

    private static Duration millis(String variable, String text) {
        try {
            long ms = Long.parseLong(text);
            if (ms < 0) {
                throw new NumberFormatException();
            }
            return Duration.ofMillis(ms);
        } catch (NumberFormatException e) {
            throw new OtlpSettingsException(variable + ": milliseconds, a whole number of 0 or more (got \"" + text
                    + "\")");
        }
    }

    private static String compression(String variable, String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        if (!lower.equals("gzip") && !lower.equals("none")) {
            throw new OtlpSettingsException(variable + ": gzip or none (got \"" + text + "\")");
        }
        return lower;
    }
}
