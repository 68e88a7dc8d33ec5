package dev.parley.core;


/** What a grant lets its holder reach: a node, or every subscriber of a topic ({@code topic:<name>}). */
public sealed interface GrantTarget {
    String TOPIC_PREFIX = "topic:";

    /** The wire form: a node id, or {@code topic:<name>}. */
    String wire();

    record Node(NodeId id) implements GrantTarget {
        public String wire() {
            return id.value();
        }
    }

    record Topic(TopicName name) implements GrantTarget {
        public String wire() {
            return TOPIC_PREFIX + name.value();
        }
    }

    public static GrantTarget parse(String wire) {
        return wire.startsWith(TOPIC_PREFIX)
                ? new Topic(TopicName.of(wire.substring(TOPIC_PREFIX.length())))
                : new Node(NodeId.of(wire));
    }
}
