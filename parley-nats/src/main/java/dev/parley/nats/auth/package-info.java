/**
 * NATS credentials for federation (decentralized auth): Parley holds an operator, a system
 * account and one account; it mints for each gateway a user JWT + nkey seed (a {@code .creds}
 * file) whose permissions let it publish only to its own outbox and use exactly the JetStream
 * API a gateway needs. nats-server trusts the operator and preloads the accounts
 * ({@code resolver: MEMORY}), so a gateway minted later connects without a server reload.
 */
package dev.parley.nats.auth;
