package dev.parley.server.a2a;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Capability;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.server.wire.Json;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Agent cards (A2A section 8). Every node has one at
 * {@code /a2a/{node}/.well-known/agent-card.json}; the hub has one at
 * {@code /.well-known/agent-card.json}. A node's card is built from its registration:
 * <ul>
 * <li>label {@code a2a.name}: the card's name (default: the node id);</li>
 * <li>label {@code a2a.description}: its description (default: a sentence made from the
 *     node's kind and lineage);</li>
 * <li>label {@code a2a.skills}: its skills, a JSON array of AgentSkill objects
 *     ({@code id}, {@code name}, {@code description}, {@code tags}, optional {@code examples},
 *     {@code inputModes}, {@code outputModes}) or a comma-separated list of skill ids
 *     (default: one skill, {@code parley-task});</li>
 * <li>label {@code a2a.version}: the agent's version (default: the hub's).</li>
 * </ul>
 * External and human nodes without such labels get the synthesized defaults. The node's
 * kind, parent and depth travel in the extension {@value #NODE_KIND_EXTENSION}. The card
 * follows {@code A2A-Version}: 1.0 gets the v1.0 ProtoJSON card; 0.3 or none (the
 * specification's default) gets the v0.3 card, which also carries the v1.0
 * {@code supportedInterfaces} so that clients of either version find every interface.
 */
public final class A2aCards {
    static final String NODE_KIND_EXTENSION = "https://parley.dev/ext/node-kind/v1";
    static final String HUB_EXTENSION = "https://parley.dev/ext/hub/v1";
    private static final String SCHEME = "parleyBearer";
    private static final List<String> MODES = List.of("text/plain", "application/json");

    private final String version;
    /** The gateway that owns a node, on a federation; empty for this hub's own nodes. */
    private final Function<NodeId, Optional<String>> owner;

    /** The capabilities a node publishes: each is a skill on its card. */
    private final Function<NodeId, List<Capability>> capabilities;

    public A2aCards(String version, Function<NodeId, Optional<String>> owner,
                    Function<NodeId, List<Capability>> capabilities) {
        this.version = version;
        this.owner = owner;
        this.capabilities = capabilities;
    }

    /** The node's card as the requested version shapes it. */
    ObjectNode card(Node node, String base, A2aVersion requested) {
        String url = base + "/a2a/" + node.id();
        ObjectNode v1 = Json.object();
        v1.put("name", node.labels().getOrDefault("a2a.name", node.id().value()));
        v1.put("description", node.labels().getOrDefault("a2a.description", describe(node)));
        ArrayNode interfaces = v1.putArray("supportedInterfaces");
        anInterface(interfaces, url, "JSONRPC", "1.0");
        anInterface(interfaces, url, "HTTP+JSON", "1.0");
        anInterface(interfaces, url, "JSONRPC", "0.3");
        provider(v1, base);
        v1.put("version", node.labels().getOrDefault("a2a.version", version));
        ObjectNode capabilities = v1.putObject("capabilities");
        capabilities.put("streaming", true);
        capabilities.put("pushNotifications", true);
        ObjectNode extension = capabilities.putArray("extensions").addObject();
        extension.put("uri", NODE_KIND_EXTENSION);
        extension.put("description", "The Parley node behind this agent: its kind (managed, external or human),"
                + " parent and lineage depth, and on a federation the gateway that owns it.");
        extension.put("required", false);
        ObjectNode params = extension.putObject("params");
        params.put("nodeId", node.id().value());
        params.put("kind", node.kind().wire());
        params.put("parent", node.parent().map(Object::toString).orElse(null));
        params.put("depth", node.depth());
        owner.apply(node.id()).ifPresent(gateway -> params.put("gateway", gateway));
        capabilities.put("extendedAgentCard", true);
        security(v1);
        modes(v1);
        v1.set("skills", skills(node));
        return requested == A2aVersion.V1_0 ? v1 : v03(v1, url);
    }

    /** The hub's own card: what it is, and where the cards of its nodes are. */
    ObjectNode hubCard(String base, A2aVersion requested) {
        String url = base + "/a2a";
        ObjectNode v1 = Json.object();
        v1.put("name", "Parley hub");
        v1.put("description", "A permissioned, durable message hub for AI agents. Every node on this hub is an A2A"
                + " agent at " + url + "/{node}, with its card at " + url + "/{node}/.well-known/agent-card.json;"
                + " messages to a node become Parley tasks under the hub's ACL, audit and delivery guarantees.");
        ArrayNode interfaces = v1.putArray("supportedInterfaces");
        anInterface(interfaces, url, "JSONRPC", "1.0");
        anInterface(interfaces, url, "HTTP+JSON", "1.0");
        anInterface(interfaces, url, "JSONRPC", "0.3");
        provider(v1, base);
        v1.put("version", version);
        ObjectNode capabilities = v1.putObject("capabilities");
        capabilities.put("streaming", true);
        capabilities.put("pushNotifications", true);
        ObjectNode extension = capabilities.putArray("extensions").addObject();
        extension.put("uri", HUB_EXTENSION);
        extension.put("description", "This card describes a Parley hub; its agents are its nodes.");
        extension.put("required", false);
        extension.putObject("params").put("agentCardTemplate", url + "/{node}/.well-known/agent-card.json");
        capabilities.put("extendedAgentCard", false);
        security(v1);
        modes(v1);
        ObjectNode skill = v1.putArray("skills").addObject();
        skill.put("id", "parley-hub");
        skill.put("name", "Reach a node");
        skill.put("description", "Each node is its own agent: fetch " + url
                + "/{node}/.well-known/agent-card.json and send it messages with a node token.");
        skill.putArray("tags").add("parley").add("hub");
        return requested == A2aVersion.V1_0 ? v1 : v03(v1, url);
    }

    private static String describe(Node node) {
        String kind = switch (node.kind()) {
            case MANAGED -> "A managed agent";
            case EXTERNAL -> "An external agent";
            case HUMAN -> "A person";
        };
        return kind + " (Parley node " + node.id() + node.parent().map(p -> ", child of " + p).orElse("")
                + ") reached through a Parley hub. A message to it becomes a Parley task assigned to it; it reports"
                + " progress and results as the task moves.";
    }

    private static void anInterface(ArrayNode interfaces, String url, String binding, String protocolVersion) {
        ObjectNode entry = interfaces.addObject();
        entry.put("url", url);
        entry.put("protocolBinding", binding);
        entry.put("protocolVersion", protocolVersion);
    }

    private static void provider(ObjectNode card, String base) {
        ObjectNode provider = card.putObject("provider");
        provider.put("organization", "Parley");
        provider.put("url", base);
    }

    private static void security(ObjectNode card) {
        ObjectNode scheme = card.putObject("securitySchemes").putObject(SCHEME).putObject("httpAuthSecurityScheme");
        scheme.put("scheme", "Bearer");
        scheme.put("description", "The token of the calling Parley node (pn_…): the hub acts as that node.");
        card.putArray("securityRequirements").addObject().putObject("schemes").putObject(SCHEME).putArray("list");
    }

    private static void modes(ObjectNode card) {
        ArrayNode in = card.putArray("defaultInputModes");
        ArrayNode out = card.putArray("defaultOutputModes");
        MODES.forEach(m -> {
            in.add(m);
            out.add(m);
        });
    }

    /** Skills from the {@code a2a.skills} label, else the one every node has. */
    private ArrayNode skills(Node node) {
        ArrayNode out = Json.array();
        for (Capability capability : capabilities.apply(node.id())) {
            ObjectNode skill = out.addObject();
            skill.put("id", capability.id());
            skill.put("name", capability.id());
            skill.put("description", "Capability " + capability.id() + " (executor skill " + capability.executor().wire()
                    + "; delegate with " + capability.delegation().wire() + "): create a Parley task addressed to "
                    + capability.id() + ".");
            skill.putArray("tags").add("capability").add(capability.delegation().wire());
        }
        String label = node.labels().get("a2a.skills");
        if (label != null && !label.isBlank()) {
            String text = label.strip();
            if (text.startsWith("[")) {
                try {
                    JsonNode parsed = Json.MAPPER.readTree(text);
                    for (JsonNode s : parsed) {
                        if (s.path("id").isTextual()) {
                            ObjectNode skill = out.addObject();
                            skill.put("id", s.get("id").asText());
                            skill.put("name", s.path("name").asText(s.get("id").asText()));
                            skill.put("description", s.path("description").asText("Skill " + s.get("id").asText()
                                    + " of " + node.id()));
                            skill.set("tags", strings(s.get("tags")));
                            for (String field : List.of("examples", "inputModes", "outputModes")) {
                                if (s.path(field).isArray()) {
                                    skill.set(field, strings(s.get(field)));
                                }
                            }
                        }
                    }
                } catch (java.io.IOException e) {
                    out.removeAll(); // not JSON: fall back to the default skill
                }
            } else {
                for (String id : text.split(",")) {
                    if (!id.isBlank()) {
                        ObjectNode skill = out.addObject();
                        skill.put("id", id.strip());
                        skill.put("name", id.strip());
                        skill.put("description", "Skill " + id.strip() + " of " + node.id() + "; send it a message"
                                + " naming the skill.");
                        skill.putArray("tags").add(id.strip());
                    }
                }
            }
        }
        if (out.isEmpty()) {
            ObjectNode skill = out.addObject();
            skill.put("id", "parley-task");
            skill.put("name", "Parley task");
            skill.put("description", "Send " + node.id() + " a message: it becomes a Parley task assigned to "
                    + node.id() + ", which accepts it, reports progress and completes or fails it.");
            skill.putArray("tags").add("parley").add(node.kind().wire());
        }
        return out;
    }

    private static ArrayNode strings(JsonNode node) {
        ArrayNode out = Json.array();
        if (node != null && node.isArray()) {
            node.forEach(v -> out.add(v.asText()));
        }
        return out;
    }

    /** The v0.3 card: url, preferredTransport, typed security schemes; the v1.0 interfaces ride along. */
    private static ObjectNode v03(ObjectNode v1, String url) {
        ObjectNode out = Json.object();
        out.put("protocolVersion", "0.3.0");
        out.put("name", v1.get("name").asText());
        out.put("description", v1.get("description").asText());
        out.put("url", url);
        out.put("preferredTransport", "JSONRPC");
        ArrayNode additional = out.putArray("additionalInterfaces");
        additional.addObject().put("url", url).put("transport", "JSONRPC");
        out.set("provider", v1.get("provider"));
        out.put("version", v1.get("version").asText());
        ObjectNode capabilities = out.putObject("capabilities");
        capabilities.put("streaming", true);
        capabilities.put("pushNotifications", true);
        capabilities.put("stateTransitionHistory", false);
        capabilities.set("extensions", v1.get("capabilities").get("extensions"));
        ObjectNode scheme = out.putObject("securitySchemes").putObject(SCHEME);
        scheme.put("type", "http");
        scheme.put("scheme", "bearer");
        scheme.put("description", "The token of the calling Parley node (pn_…): the hub acts as that node.");
        out.putArray("security").addObject().putArray(SCHEME);
        out.set("defaultInputModes", v1.get("defaultInputModes"));
        out.set("defaultOutputModes", v1.get("defaultOutputModes"));
        out.set("skills", v1.get("skills"));
        out.put("supportsAuthenticatedExtendedCard", v1.get("capabilities").path("extendedAgentCard").asBoolean());
        out.set("supportedInterfaces", v1.get("supportedInterfaces"));
        return out;
    }
}
