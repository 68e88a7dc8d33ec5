package dev.parley.server.a2a;

import java.util.Optional;

/**
 * The A2A protocol version of a request, from the {@code A2A-Version} service parameter
 * (header, or query parameter). Per the specification (section 3.6.2) an absent or empty
 * value means 0.3; versions compare on {@code Major.Minor} only; anything else this hub does
 * not speak is {@code VersionNotSupportedError}.
 */
enum A2aVersion {
    V0_3("0.3"),
    V1_0("1.0");

    static final String HEADER = "A2A-Version";

    final String wire;

    A2aVersion(String wire) {
        this.wire = wire;
    }

    static A2aVersion of(Optional<String> requested) {
        String value = requested.map(String::strip).orElse("");
        if (value.isEmpty()) {
            return V0_3;
        }
        String[] parts = value.split("\\.");
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            if (major == 0 && minor == 3) {
                return V0_3;
            }
            if (major == 1 && minor == 0) {
                return V1_0;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new A2aError(A2aError.Kind.VERSION_NOT_SUPPORTED, "A2A protocol version '" + value
                + "' is not supported here; supported versions: 0.3, 1.0");
    }
}
