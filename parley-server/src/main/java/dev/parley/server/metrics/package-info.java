/** The hub's counters, gauges and histograms, rendered for {@code GET /metrics}. */
package dev.parley.server.metrics;
