/**
 * What every HTTP edge stands on: the route table and its guard (authentication, rate limits,
 * errors in the contract's body), one request's {@link dev.parley.server.http.Exchange}, request
 * bodies, connection timeouts and caps, and the answers to requests refused before routing.
 */
package dev.parley.server.http;
