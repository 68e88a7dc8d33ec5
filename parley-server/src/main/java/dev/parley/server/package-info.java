/**
 * The hub wiring: {@link dev.parley.server.Hub} opens the store, builds the core services, the
 * engine ({@code delivery}, {@code policy}, {@code keys}) and the edges ({@code rest}, {@code a2a},
 * {@code mcp}) on the transport ({@code http}), and starts HTTP. Only this package names the
 * SQLite store; docs/architecture.md draws the whole.
 */
package dev.parley.server;
