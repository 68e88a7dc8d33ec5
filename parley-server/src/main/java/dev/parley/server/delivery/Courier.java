package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.Webhook;
import dev.parley.core.WebhookSignature;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.Executors;

/** Carries one envelope to one webhook: a signed POST, bounded by connect and response timeouts. */
public final class Courier implements AutoCloseable {

    /** What a push attempt came to. */
    sealed interface Outcome {
        record Delivered(int status) implements Outcome {
        }

        record Refused(String why) implements Outcome {
        }
    }

    private final HttpClient http;
    private final Duration timeout;
    private final java.util.List<PushForm> forms = new java.util.concurrent.CopyOnWriteArrayList<>();

    public Courier(Duration timeout) {
        this.timeout = timeout;
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
    }

    /** Adds a form for the envelopes it claims (pushes whose body is not the envelope itself). */
    void shape(PushForm form) {
        forms.add(form);
    }

    Outcome push(Webhook webhook, Envelope envelope) throws InterruptedException {
        PushForm.Outbound shaped = forms.stream().map(f -> f.of(envelope)).flatMap(java.util.Optional::stream)
                .findFirst().orElse(null);
        byte[] body = shaped == null ? Json.envelope(envelope) : shaped.body();
        HttpRequest.Builder builder = HttpRequest.newBuilder(webhook.url())
                .timeout(timeout)
                .header("Content-Type", shaped == null ? "application/json" : shaped.contentType())
                .header("User-Agent", "parley-hub")
                .header("Parley-Event-Id", envelope.id())
                .header("Parley-Attempt", Integer.toString(envelope.trace().attempt()))
                .header(WebhookSignature.HEADER, WebhookSignature.sign(webhook.secret(), body));
        if (shaped != null) {
            shaped.headers().forEach(builder::header);
        }
        HttpRequest request = builder.POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        try {
            int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            return status / 100 == 2 ? new Outcome.Delivered(status) : new Outcome.Refused("HTTP " + status);
        } catch (HttpTimeoutException e) {
            return new Outcome.Refused("no answer within " + timeout.toMillis() + " ms");
        } catch (java.net.ConnectException e) {
            // the JDK's client says nothing more (its message is null): the why is in the user's words, not a class name
            return new Outcome.Refused("cannot connect to " + webhook.url().getHost() + " (refused or unreachable)");
        } catch (IOException e) {
            return new Outcome.Refused("connection failed" + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        }
    }

    @Override
    public void close() {
        http.close();
    }
}
