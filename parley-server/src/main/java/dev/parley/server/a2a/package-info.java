/**
 * The A2A edge ({@code /a2a/...}, {@code /.well-known/agent-card.json}): JSON-RPC and HTTP+JSON
 * bindings, agent cards and push-notification configs, mapped onto the core's tasks.
 */
package dev.parley.server.a2a;
