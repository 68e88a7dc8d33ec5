/**
 * The JSON of the wire, shared by the edges and the engine: one mapper, one time format, one
 * envelope encoding ({@link dev.parley.server.wire.Json}), and the contract's shapes of nodes,
 * messages, tasks and the rest ({@link dev.parley.server.wire.Views}).
 */
package dev.parley.server.wire;
