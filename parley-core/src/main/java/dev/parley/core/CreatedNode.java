package dev.parley.core;

/** A registered node and its token, which is shown this once and never stored in clear. */
public record CreatedNode(Node node, String token) {
}
