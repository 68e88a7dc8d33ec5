package dev.parley.cli;

import picocli.CommandLine.IVersionProvider;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The version of this build: from {@code version.properties}, which Maven filters with the
 * project version, falling back to the jar manifest (e.g. when resources were not filtered).
 */
final class ParleyVersion implements IVersionProvider {

    static String current() {
        try (InputStream in = ParleyVersion.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                String version = properties.getProperty("version", "");
                if (!version.isBlank() && !version.contains("${")) {
                    return version.strip();
                }
            }
        } catch (IOException unreadable) {
            // fall through to the manifest
        }
        String manifest = ParleyVersion.class.getPackage().getImplementationVersion();
        return manifest != null ? manifest : "unknown";
    }

    /** {@code parley <version>}, as both {@code parley version} and {@code parley --version} print it. */
    static String line() {
        return "parley " + current();
    }

    @Override
    public String[] getVersion() {
        return new String[] {line()};
    }
}
