/**
 * The hub's permission mediation: {@link dev.parley.server.permission.Permissions} composes
 * parley-trace's mediator with this hub's parts (agent specs, the live policy's permission
 * rules, the router and reply waiters to ask an approver). Every surface calls it.
 */
package dev.parley.server.permission;
