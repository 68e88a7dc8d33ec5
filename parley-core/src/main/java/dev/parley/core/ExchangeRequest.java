package dev.parley.core;

import java.util.Optional;

/**
 * An invite presented for a ticket: the token, the node id wanted, a client nonce, and
 * optionally the node's Ed25519 public key with its proof of possession.
 */
public record ExchangeRequest(String inviteToken, NodeId nodeId, String nonce, Optional<String> publicKey,
                              Optional<String> proof) {
}
