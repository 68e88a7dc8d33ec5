package dev.parley.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a hub's store writes to its log, counted in the log itself ({@code bench send
 * --wal-frames}): the frames (pages) of the WAL's current generation, named by the b-tree each
 * page belongs to, a send. Unlike sends/s, this does not move with how fast the machine is that
 * day, only with what each commit writes and how many sends a commit takes.
 *
 * <p>The store's {@code parley.db-wal} is read while the hub runs, up to the last commit whose
 * frames all carry the log's salts and a checksum that follows on (SQLite's own rule,
 * https://www.sqlite.org/fileformat2.html#walformat), so a frame read half-written ends the
 * count. A read-only connection to the store, opened after, names each page through {@code
 * dbstat} (the pages the log held then belong to the same tables and indexes a moment later);
 * sends are the rows a commit added to the envelopes' table, read from the rowids of the table's
 * leaf pages in its frames (a rowid past every one before it is a new row). The first commit that
 * wrote a leaf of that table only sets where counting starts: exactly, when it added rows, as
 * nearly every commit of a send load does; one that only marked older rows starts the count a
 * few rows low.
 */
final class WalFrames {
    private static final int WAL_HEADER = 32;
    private static final int FRAME_HEADER = 24;
    private static final int MAGIC_LITTLE_ENDIAN = 0x377f0682;
    private static final int MAGIC_BIG_ENDIAN = 0x377f0683;
    private static final int TABLE_LEAF = 0x0D;
    /** The store's file, in its data directory. */
    private static final String STORE = "parley.db";
    /** The store's table of envelopes, whose new rows are the sends. */
    static final String ENVELOPES = "envelopes";

    private WalFrames() {
    }

    /** Commits counted (after the one counting starts at), the sends they added, and their frames by b-tree, most first. */
    record Count(long commits, long sends, Map<String, Long> framesByTree) {
        long frames() {
            return framesByTree.values().stream().mapToLong(Long::longValue).sum();
        }

        double framesEachSend() {
            return sends == 0 ? Double.NaN : (double) frames() / sends;
        }
    }

    /**
     * The table or index a page belongs to, and whether the page holds cells (a leaf or an
     * interior page: its first byte says which) rather than the rest of a row too long for one.
     */
    private record Tree(String name, boolean cells) {
        /** A page the database does not use as the log leaves it (on the free list, or past its end). */
        static final Tree UNKNOWN = new Tree("(free pages)", false);
    }

    /** One frame of the log: the page it holds, and where that page starts in the file. */
    private record Frame(long page, int offset) {
    }

    /** Counts the log of the store in {@code dataDir}; {@code rows} is the rowid table whose new rows are counted. */
    static Count of(Path dataDir, String rows) throws IOException, SQLException {
        byte[] wal = Files.readAllBytes(dataDir.resolve(STORE + "-wal"));
        List<List<Frame>> commits = commits(wal);
        Map<Long, Tree> trees = trees(dataDir.resolve(STORE));
        Map<String, Long> byTree = new HashMap<>();
        long first = -1; // the table's newest row when counting starts: at the first commit that wrote one of its leaves
        long newest = 0;
        long counted = 0;
        for (List<Frame> commit : commits) {
            boolean leafWritten = false;
            for (Frame frame : commit) {
                Tree tree = trees.getOrDefault(frame.page(), Tree.UNKNOWN);
                long rowid = tree.name().equals(rows) && tree.cells() ? newestRowid(wal, frame) : -1;
                if (rowid >= 0) {
                    newest = Math.max(newest, rowid);
                    leafWritten = true;
                }
                if (first >= 0) {
                    byTree.merge(tree.name(), 1L, Long::sum);
                }
            }
            if (first >= 0) {
                counted++;
            } else if (leafWritten) {
                first = newest;
            }
        }
        Map<String, Long> sorted = new LinkedHashMap<>();
        byTree.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return new Count(counted, first < 0 ? 0 : newest - first, sorted);
    }

    /** The log's valid frames, by commit; frames after the last commit are left out. */
    private static List<List<Frame>> commits(byte[] wal) throws IOException {
        if (wal.length < WAL_HEADER) {
            return List.of();
        }
        ByteBuffer header = ByteBuffer.wrap(wal).order(ByteOrder.BIG_ENDIAN);
        int magic = header.getInt(0);
        if (magic != MAGIC_LITTLE_ENDIAN && magic != MAGIC_BIG_ENDIAN) {
            throw new IOException("not a SQLite write-ahead log (magic " + Integer.toHexString(magic) + ")");
        }
        ByteOrder words = magic == MAGIC_BIG_ENDIAN ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        int pageSize = header.getInt(8);
        int salt1 = header.getInt(16);
        int salt2 = header.getInt(20);
        int[] sum = checksum(wal, 0, 24, words, new int[2]);
        if (sum[0] != header.getInt(24) || sum[1] != header.getInt(28)) {
            return List.of();
        }
        List<List<Frame>> commits = new ArrayList<>();
        List<Frame> open = new ArrayList<>();
        for (int at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
            if (header.getInt(at + 8) != salt1 || header.getInt(at + 12) != salt2) {
                break;
            }
            checksum(wal, at, 8, words, sum);
            checksum(wal, at + FRAME_HEADER, pageSize, words, sum);
            if (sum[0] != header.getInt(at + 16) || sum[1] != header.getInt(at + 20)) {
                break;
            }
            open.add(new Frame(Integer.toUnsignedLong(header.getInt(at)), at + FRAME_HEADER));
            if (header.getInt(at + 4) != 0) { // the database's size after a commit, in its last frame
                commits.add(open);
                open = new ArrayList<>();
            }
        }
        return commits;
    }

    /** SQLite's log checksum over {@code length} bytes from {@code from}, going on from {@code sum}. */
    private static int[] checksum(byte[] bytes, int from, int length, ByteOrder order, int[] sum) {
        ByteBuffer words = ByteBuffer.wrap(bytes, from, length).order(order);
        int s0 = sum[0];
        int s1 = sum[1];
        for (int i = from; i < from + length; i += 8) {
            s0 += words.getInt(i) + s1;
            s1 += words.getInt(i + 4) + s0;
        }
        sum[0] = s0;
        sum[1] = s1;
        return sum;
    }

    /** Each page of the database (as the log leaves it) and the table or index it belongs to. */
    private static Map<Long, Tree> trees(Path database) throws SQLException {
        Map<Long, Tree> trees = new HashMap<>();
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:file:" + database.toAbsolutePath() + "?mode=ro");
             var select = connection.createStatement();
             var rs = select.executeQuery("SELECT name, pageno, pagetype FROM dbstat")) {
            while (rs.next()) {
                trees.put(rs.getLong(2), new Tree(rs.getString(1), !"overflow".equals(rs.getString(3))));
            }
        }
        return trees;
    }

    /** The largest rowid on the table leaf page held by {@code frame} (0 if none), or -1 if it holds another kind of page. */
    private static long newestRowid(byte[] wal, Frame frame) {
        int page = frame.offset();
        int header = page + (frame.page() == 1 ? 100 : 0);
        if ((wal[header] & 0xFF) != TABLE_LEAF) {
            return -1;
        }
        int cells = ((wal[header + 3] & 0xFF) << 8) | (wal[header + 4] & 0xFF);
        long newest = 0;
        for (int i = 0; i < cells; i++) {
            int pointer = header + 8 + 2 * i;
            int cell = page + (((wal[pointer] & 0xFF) << 8) | (wal[pointer + 1] & 0xFF));
            long[] payload = varint(wal, cell);
            newest = Math.max(newest, varint(wal, (int) payload[1])[0]);
        }
        return newest;
    }

    /** A SQLite varint at {@code at}: its value and the offset after it. */
    private static long[] varint(byte[] bytes, int at) {
        long value = 0;
        for (int i = 0; i < 8; i++) {
            int b = bytes[at + i] & 0xFF;
            value = (value << 7) | (b & 0x7F);
            if (b < 0x80) {
                return new long[] {value, at + i + 1};
            }
        }
        return new long[] {(value << 8) | (bytes[at + 8] & 0xFF), at + 9};
    }
}
