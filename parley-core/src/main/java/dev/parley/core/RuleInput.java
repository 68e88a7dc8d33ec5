package dev.parley.core;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a policy rule sees of one decision: the sender, the target and the envelope.
 * Absent values are empty strings, maps and lists, never nulls, so rules compare plainly.
 */
public record RuleInput(Party sender, Party target, EnvelopeFacts envelope) {

    /**
     * A node as a rule sees it. {@code parent} is "" for a root; {@code group} is the group
     * it belongs to as a member (its parent and its siblings, or itself and its children
     * for a root), as {@code GET /v1/nodes/{id}} shows it.
     */
    public record Party(String id, String kind, Map<String, String> labels, String parent, List<String> group) {
        public Party {
            labels = Map.copyOf(labels);
            group = List.copyOf(group);
        }

        public static Party of(Node node, Graph graph) {
            return new Party(node.id().value(), node.kind().wire(), node.labels(),
                    node.parent().map(NodeId::value).orElse(""),
                    graph.groupIdsOf(node));
        }

        /** The hub itself, the sender of admin broadcasts. */
        public static Party hub() {
            return new Party(NodeId.HUB.value(), "hub", Map.of(), "", List.of());
        }
    }

    /**
     * The envelope as a rule sees it: its kind, the size of its text in UTF-8 bytes (0
     * without text), its meta, and its topic ("" unless a topic event).
     */
    public record EnvelopeFacts(String kind, long textSize, Map<String, String> meta, String topic) {
        public EnvelopeFacts {
            meta = Map.copyOf(meta);
        }

        public static EnvelopeFacts of(String kind, Payload payload, Optional<String> topic) {
            return new EnvelopeFacts(kind, payload.text().map(EnvelopeFacts::utf8Length).orElse(0L), payload.meta(),
                    topic.orElse(""));
        }

        /** The length of {@code text} in UTF-8 bytes, counted without encoding it. */
        public static long utf8Length(String text) {
            long bytes = 0;
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (c < 0x80) {
                    bytes += 1;
                } else if (c < 0x800) {
                    bytes += 2;
                } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                        && Character.isLowSurrogate(text.charAt(i + 1))) {
                    bytes += 4;
                    i++;
                } else if (Character.isSurrogate(c)) {
                    bytes += 1; // a lone surrogate: encoded as '?', as String.getBytes does
                } else {
                    bytes += 3;
                }
            }
            return bytes;
        }

        /** An envelope known only by its kind (a dry-run check): no text, no meta, no topic. */
        public static EnvelopeFacts ofKind(String kind) {
            return new EnvelopeFacts(kind, 0, Map.of(), "");
        }
    }
}
