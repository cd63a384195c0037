package io.github.redislock.bench;

import java.util.List;
import java.util.Locale;

/** A grouped bar chart of the run's medians, as SVG: one group per scenario, one bar per library. */
final class Chart {

    private static final String[] COLOURS = {"#2e7d32", "#81c784", "#c62828", "#1565c0", "#9e9e9e", "#90caf9", "#e0e0e0"};
    private static final List<String[]> PANELS = List.of(
            new String[] {"S1 ops/s", "uncontended lock+unlock, ops/s"},
            new String[] {"S2 ops/s (16 threads, distinct keys)", "16 threads, distinct keys, ops/s"},
            new String[] {"S3 ops/s (16 threads, 1 JVM, one key)", "hot key, 16 threads, ops/s"},
            new String[] {"S3 ops/s (4 JVMs x 4 threads, one key)", "hot key, 4 JVMs x 4 threads, ops/s"},
            new String[] {"S4 hand-off p50 µs", "hand-off p50, µs (lower is better)"},
            new String[] {"S7 fair ops/s (4 JVMs x 4 threads, one key)", "fair hot key, 4 JVMs x 4 threads, ops/s"},
            new String[] {"S8 ops/s (16 threads, 90 % reads, one key)", "read-mostly (90 % reads), 16 threads, ops/s"},
            new String[] {"S9 ops/s (16 threads, semaphore of 4 permits)", "semaphore of 4, 16 threads, ops/s"});

    private Chart() {
    }

    static String svg(LockBenchmark.Results results) {
        int groupWidth = 40 * Contender.NAMES.length + 40;
        int width = groupWidth * PANELS.size() + 40;
        int height = 330;
        int base = 250;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"11\">%n", width, height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        for (int p = 0; p < PANELS.size(); p++) {
            String metric = PANELS.get(p)[0];
            double max = 0;
            for (String name : Contender.NAMES) {
                Double v = results.median(metric, name);
                max = Math.max(max, v == null ? 0 : v);
            }
            int x0 = 30 + p * groupWidth;
            for (int c = 0; c < Contender.NAMES.length; c++) {
                Double v = results.median(metric, Contender.NAMES[c]);
                double h = v == null || max == 0 ? 0 : 200 * v / max;
                int x = x0 + c * 40;
                svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%.1f\" width=\"32\" height=\"%.1f\" fill=\"%s\"/>%n",
                        x, base - h, h, COLOURS[c]));
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%s</text>%n", x + 16,
                        base - h - 4, v == null ? "–" : LockBenchmark.format(v)));
            }
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x0 + 20 * Contender.NAMES.length - 4, base + 18, PANELS.get(p)[1]));
        }
        for (int c = 0; c < Contender.NAMES.length; c++) {
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>%n", 30 + c * 140, height - 30, COLOURS[c], 46 + c * 140, height - 20,
                    Contender.NAMES[c]));
        }
        svg.append("</svg>\n");
        return svg.toString();
    }
}
