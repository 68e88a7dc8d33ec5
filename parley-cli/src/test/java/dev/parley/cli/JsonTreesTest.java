package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JsonTreesTest {

    /** Seeds of the generated documents: each run reads and writes the same ones. */
    static LongStream seeds() {
        return LongStream.range(0, 200);
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void readsAndWritesWhatTheMapperReadsAndWrites(long seed) throws Exception {
        String text = document(new Random(seed), 0);
        JsonNode tree = JsonTrees.read(text);
        JsonNode mappers = CliRun.JSON.readTree(text);
        assertEquals(mappers, tree);
        assertEquals(mappers.getNodeType(), tree.getNodeType());
        assertArrayEquals(CliRun.JSON.writeValueAsBytes(mappers), JsonTrees.bytes(tree));
    }

    @ParameterizedTest
    @ValueSource(strings = {"2147483647", "2147483648", "-9223372036854775808", "9223372036854775808",
            "123456789012345678901234567890", "0.1", "1e308", "1e400", "-0.0", "5E-324"})
    void numbersBecomeTheMappersNodes(String number) throws Exception {
        JsonNode tree = JsonTrees.read("[" + number + "]").get(0);
        JsonNode mappers = CliRun.JSON.readTree("[" + number + "]").get(0);
        assertEquals(mappers, tree);
        assertEquals(mappers.numberType(), tree.numberType());
        assertArrayEquals(CliRun.JSON.writeValueAsBytes(mappers), JsonTrees.bytes(tree));
    }

    @Test
    void noContentIsAMissingNodeAndWhatFollowsTheFirstValueIsIgnoredAsTheMapperDoes() throws Exception {
        assertTrue(JsonTrees.read("").isMissingNode());
        assertTrue(JsonTrees.read("  \n").isMissingNode());
        assertEquals(CliRun.JSON.readTree("{\"a\":1} {\"b\":2}"), JsonTrees.read("{\"a\":1} {\"b\":2}"));
        assertEquals(CliRun.JSON.readTree("{\"a\":1,\"a\":2}"), JsonTrees.read("{\"a\":1,\"a\":2}"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{", "{\"a\":}", "[1,]", "nul", "{\"a\" 1}", "\"open", "{'a':1}"})
    void malformedTextIsAJsonProcessingException(String text) {
        assertThrows(JsonProcessingException.class, () -> JsonTrees.read(text));
    }

    @Test
    void nestingBeyondTheParsersBoundIsRefusedNotAStackOverflow() {
        String deep = "[".repeat(100_000);
        assertThrows(JsonProcessingException.class, () -> JsonTrees.read(deep));
    }

    @Test
    void textsKeepTheirOrder() {
        var labels = new LinkedHashMap<String, String>();
        labels.put("z", "1");
        labels.put("a", "2");
        assertEquals("{\"z\":\"1\",\"a\":\"2\"}", new String(JsonTrees.bytes(JsonTrees.texts(labels)), StandardCharsets.UTF_8));
        assertEquals("[\"b\",\"a\"]", new String(JsonTrees.bytes(JsonTrees.texts(List.of("b", "a"))), StandardCharsets.UTF_8));
    }

    /**
     * What the change is for: a send, in a JVM of its own, never initializes Jackson's mapper
     * (and with it the time-zone database and the locales' calendar data), with a text or with
     * {@code --data} (whose value picocli writes with {@code String.valueOf} while parsing: a
     * tree's {@code toString} is the mapper's). The hub is an address nobody listens on: the
     * request is built and written up to the connect.
     */
    @ParameterizedTest
    @ValueSource(strings = {"hi", "--data={\"k\":[1,\"\u00e9\",null,2.5]}"})
    void aSendInitializesNoObjectMapper(String content) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "-Xlog:class+init=info:stdout",
                "-cp", System.getProperty("java.class.path"), "dev.parley.cli.Main",
                "send", "--url", "http://127.0.0.1:1", "--token", "t", "--to", "w1", content));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertTrue(output.contains("cannot reach the hub"), output); // it did get as far as the connect
        assertTrue(output.contains("Initializing 'dev/parley/cli/HubClient'"), output);
        assertFalse(output.contains("Initializing 'com/fasterxml/jackson/databind/ObjectMapper'"), output);
        assertFalse(output.contains("Initializing 'sun/util/calendar/ZoneInfoFile'"), output);
    }

    /** A random JSON value: objects and arrays to depth 4, every kind of scalar, escapes and non-ASCII text. */
    private static String document(Random random, int depth) {
        int kind = depth >= 4 ? 2 + random.nextInt(7) : random.nextInt(9);
        return switch (kind) {
            case 0 -> {
                StringBuilder object = new StringBuilder("{");
                int fields = random.nextInt(5);
                for (int i = 0; i < fields; i++) {
                    object.append(i == 0 ? "" : ",").append(quoted(random)).append(':').append(document(random, depth + 1));
                }
                yield object.append('}').toString();
            }
            case 1 -> {
                StringBuilder array = new StringBuilder("[");
                int items = random.nextInt(5);
                for (int i = 0; i < items; i++) {
                    array.append(i == 0 ? "" : ",").append(document(random, depth + 1));
                }
                yield array.append(']').toString();
            }
            case 2 -> quoted(random);
            case 3 -> Integer.toString(random.nextInt());
            case 4 -> Long.toString(random.nextLong());
            case 5 -> Double.toString(random.nextGaussian() * Math.pow(10, random.nextInt(40) - 20));
            case 6 -> random.nextBoolean() ? "true" : "false";
            case 7 -> "null";
            default -> new java.math.BigInteger(100, random).toString();
        };
    }

    private static String quoted(Random random) {
        String[] pieces = {"a", "b", " ", "\"", "\\", "/", "\n", "\t", "\u00e9", "\u4e2d", "\ud83d\ude00", "\u0001"};
        StringBuilder text = new StringBuilder();
        int length = random.nextInt(8);
        for (int i = 0; i < length; i++) {
            text.append(pieces[random.nextInt(pieces.length)]);
        }
        try {
            return CliRun.JSON.writeValueAsString(text.toString());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
