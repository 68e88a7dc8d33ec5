package dev.parley.server.chat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Chats;
import dev.parley.core.Webhook;
import dev.parley.core.WebhookSignature;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The generic chat webhook adapter's way out: each chat message is POSTed as JSON to the
 * platform's outbound URL, signed like every Parley webhook ({@code Parley-Signature}), for
 * the platform's bridge to post: {@code {platform, room, user, thread, replyTo, text, card,
 * envelopeId}} ({@code room} null: to the user directly; {@code card}: an approval card with
 * its actions, for buttons). A 2xx means the bridge took it.
 */
final class WebhookChatAdapter implements ChatAdapter {
    private static final Logger LOG = Logger.getLogger(WebhookChatAdapter.class.getName());
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final String platform;
    private final Webhook out;
    private final HttpClient http;

    WebhookChatAdapter(String platform, Webhook out, HttpClient http) {
        this.platform = platform;
        this.out = out;
        this.http = http;
    }

    @Override
    public String platform() {
        return platform;
    }

    @Override
    public Posted post(Chats.Outbound message) {
        ObjectNode body = Json.object();
        body.put("platform", message.platform());
        body.put("room", message.room().orElse(null));
        body.put("user", message.user());
        body.put("thread", message.thread().orElse(null));
        body.put("replyTo", message.replyTo().orElse(null));
        body.put("text", message.text());
        body.set("card", message.card().map(card -> {
            try {
                return Json.MAPPER.readTree(card.json());
            } catch (IOException e) {
                throw new IllegalStateException("a card's data is JSON the hub wrote", e);
            }
        }).orElse(null));
        body.put("envelopeId", message.envelopeId());
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        HttpRequest request = HttpRequest.newBuilder(out.url()).timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .header(WebhookSignature.HEADER, WebhookSignature.sign(out.secret(), bytes))
                .POST(HttpRequest.BodyPublishers.ofByteArray(bytes)).build();
        try {
            int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            if (status / 100 == 2) {
                return Posted.TAKEN;
            }
            // A 4xx other than a timeout or a rate limit is the bridge saying no, for good: the envelope fails.
            boolean never = status / 100 == 4 && status != 408 && status != 429;
            LOG.warning("chat platform " + platform + ": its bridge answered " + status + " for envelope "
                    + message.envelopeId() + (never ? "; it is not posted" : "; posted again later"));
            return never ? Posted.REFUSED : Posted.LATER;
        } catch (IOException e) {
            LOG.log(Level.WARNING, "chat platform " + platform + ": its bridge at " + out.url() + " is not reachable;"
                    + " envelope " + message.envelopeId() + " is posted again later", e);
            return Posted.LATER;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Posted.LATER;
        }
    }
}
