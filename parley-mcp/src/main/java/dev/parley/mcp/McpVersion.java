package dev.parley.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version shown as {@code serverInfo.version}: the build's project version. */
public final class McpVersion {
    private static final String VERSION = load();

    private McpVersion() {
    }

    public static String current() {
        return VERSION;
    }

    private static String load() {
        try (InputStream in = McpVersion.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "dev";
            }
            Properties properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", "dev");
            return version.startsWith("${") ? "dev" : version;
        } catch (IOException e) {
            return "dev";
        }
    }
}
