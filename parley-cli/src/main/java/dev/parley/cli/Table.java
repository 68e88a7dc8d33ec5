package dev.parley.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** Left-aligned columns two spaces apart: list output that stays readable and greppable. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();

    /** A table with the given header row; none when no names are given. */
    Table(String... header) {
        if (header.length > 0) {
            rows.add(header);
        }
    }

    Table row(String... cells) {
        rows.add(cells);
        return this;
    }

    void print(PrintWriter out) {
        int columns = rows.stream().mapToInt(r -> r.length).max().orElse(0);
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int c = 0; c < row.length; c++) {
                widths[c] = Math.max(widths[c], row[c].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < row.length; c++) {
                line.append(row[c]);
                if (c < row.length - 1) {
                    line.append(" ".repeat(widths[c] - row[c].length() + 2));
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
