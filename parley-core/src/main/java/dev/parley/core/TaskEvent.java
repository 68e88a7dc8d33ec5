package dev.parley.core;

import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** A change to a task: the assignee's accept, update, complete and fail; the creator's cancel. */
public sealed interface TaskEvent {
    /** The wire name of the event ({@code accept}, {@code update}, …). */
    String name();

    /** The kind of the envelope that tells the other party. */
    String envelopeKind();

    /**
     * The move a notice of {@code kind} tells of, read from the task as it stood after the
     * move (the notice's data); empty for a kind that tells of none.
     */
    static Optional<TaskEvent> told(String kind, Task after) {
        return Stream.<TaskEvent>of(new Accept(after.etaSeconds()), new Update(after.progress()),
                        new Complete(after.result(), after.artifacts()), new Fail(after.reason().orElse("")),
                        new Cancel(after.reason().orElse("")))
                .filter(event -> event.envelopeKind().equals(kind)).findFirst();
    }

    record Accept(Optional<Long> etaSeconds) implements TaskEvent {
        public String name() {
            return "accept";
        }

        public String envelopeKind() {
            return "task_accept";
        }
    }

    record Update(Optional<JsonText> progress) implements TaskEvent {
        public String name() {
            return "update";
        }

        public String envelopeKind() {
            return "task_update";
        }
    }

    record Complete(Optional<JsonText> result, List<Artifact> artifacts) implements TaskEvent {
        public Complete {
            artifacts = List.copyOf(artifacts);
        }

        public String name() {
            return "complete";
        }

        public String envelopeKind() {
            return "task_complete";
        }
    }

    record Fail(String reason) implements TaskEvent {
        public String name() {
            return "fail";
        }

        public String envelopeKind() {
            return "task_failed";
        }
    }

    record Cancel(String reason) implements TaskEvent {
        public String name() {
            return "cancel";
        }

        public String envelopeKind() {
            return "task_canceled";
        }
    }

    /** A produced artifact, by reference. */
    record Artifact(String uri, String mediaType) {
    }
}
