/** Key handling: the ticket signing keys, JWT tickets, and the sealing key for stored webhook secrets. */
package dev.parley.server.keys;
