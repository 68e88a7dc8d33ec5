/**
 * The REST edge ({@code /v1/...}, {@code /healthz}, {@code /metrics}): each {@code *Routes} reads a
 * request, calls one core service (or the delivery engine for streams and waits) and answers
 * with a {@link dev.parley.server.wire.Views} shape. No store port, no audit entry here.
 */
package dev.parley.server.rest;
