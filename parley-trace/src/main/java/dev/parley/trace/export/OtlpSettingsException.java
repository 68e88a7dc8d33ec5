package dev.parley.trace.export;

/** An export setting that does not hold; the message names the variable or option and says why. */
public final class OtlpSettingsException extends IllegalArgumentException {
    public OtlpSettingsException(String message) {
        super(message);
    }
}
