package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.Notifier;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Passes each committed envelope to every part of the hub that acts on new envelopes. */
public final class CommitListeners implements Notifier {
    private final List<Notifier> listeners = new CopyOnWriteArrayList<>();

    public CommitListeners add(Notifier listener) {
        listeners.add(listener);
        return this;
    }

    @Override
    public void committed(Envelope envelope) {
        for (Notifier listener : listeners) {
            listener.committed(envelope);
        }
    }

    @Override
    public void delivered(List<Envelope> envelopes, Instant at) {
        for (Notifier listener : listeners) {
            listener.delivered(envelopes, at);
        }
    }
}
