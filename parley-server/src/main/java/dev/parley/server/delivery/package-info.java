/**
 * The delivery engine, after the commit: {@link dev.parley.server.delivery.CommitListeners} hears
 * every committed envelope, {@link dev.parley.server.delivery.InboxFeeds} wakes the streams that
 * {@link dev.parley.server.delivery.InboxStream} writes as SSE, the
 * {@link dev.parley.server.delivery.Dispatcher} pushes webhooks, redelivers and keeps reply
 * deadlines, and {@link dev.parley.server.delivery.ReplyWaiters} wakes callers waiting for a reply.
 */
package dev.parley.server.delivery;
