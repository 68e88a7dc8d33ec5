package dev.parley.nats.auth;

import java.util.regex.Pattern;

/**
 * A gateway's id. It is one NATS subject token ({@code parley.out.<gw>.<target>}) and part of a
 * stream name ({@code PARLEY_OUT_<gw>}), so unlike a node id it may not contain a dot.
 */
public record GatewayId(String value) {
    private static final Pattern PATTERN = Pattern.compile("^[a-z0-9][a-z0-9_-]{0,62}$");

    public GatewayId {
        if (value == null || !PATTERN.matcher(value).matches()) {
            throw new IllegalArgumentException("a gateway id is 1 to 63 characters of a-z, 0-9, '_' and '-', "
                    + "starting with a letter or digit (no dots: it is a NATS subject token); got " + value);
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
