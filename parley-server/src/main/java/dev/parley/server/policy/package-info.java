/**
 * The policy engines behind the core's ports: live policy rules in CEL (loaded, compiled and
 * reloaded from a file) and JSON Schema checks of payloads.
 */
package dev.parley.server.policy;
