/**
 * Permission mediation: one path from an agent's {@code permission_request} to a decision to its
 * {@code permission_response}. {@link dev.parley.trace.permission.PermissionMediator} asks its
 * {@link dev.parley.trace.permission.Decider}s in order (the tool blocklist, the policy's
 * permission rules, a node) and records both events in the turn's trace. Pure: the hub supplies
 * the rules and the way to ask a node.
 */
package dev.parley.trace.permission;
