package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Appended;
import dev.parley.core.AuditRecord;
import dev.parley.core.Grant;
import dev.parley.core.MessageRecord;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.TimelineEntry;

import java.util.List;

/** Domain values as the JSON bodies of the contract. */
final class Views {
    private Views() {
    }

    static ObjectNode node(Node node, List<NodeId> children, List<NodeId> group) {
        ObjectNode out = Json.object();
        out.put("id", node.id().value());
        out.put("kind", node.kind().wire());
        out.put("parent", node.parent().map(NodeId::value).orElse(null));
        var childArray = out.putArray("children");
        children.forEach(c -> childArray.add(c.value()));
        var groupArray = out.putArray("group");
        group.forEach(g -> groupArray.add(g.value()));
        out.put("depth", node.depth());
        var labels = out.putObject("labels");
        node.labels().forEach(labels::put);
        out.put("createdAt", Json.time(node.createdAt()));
        return out;
    }

    static ObjectNode grant(Grant grant) {
        ObjectNode out = Json.object();
        out.put("id", grant.id());
        out.put("from", grant.from().value());
        out.put("to", grant.to().wire());
        out.put("expiresAt", grant.expiresAt().map(Json::time).orElse(null));
        out.put("note", grant.note());
        out.put("createdAt", Json.time(grant.createdAt()));
        return out;
    }

    static ObjectNode accepted(Appended appended) {
        ObjectNode out = Json.object();
        out.put("id", appended.envelope().id());
        out.put("seq", appended.envelope().seq());
        out.put("to", appended.envelope().to().value());
        out.put("status", "accepted");
        out.put("createdAt", Json.time(appended.envelope().createdAt()));
        if (appended.duplicate()) {
            out.put("duplicate", true);
        }
        return out;
    }

    static ObjectNode message(MessageRecord record) {
        var e = record.envelope();
        ObjectNode out = Json.object();
        out.put("id", e.id());
        out.put("seq", e.seq());
        out.put("from", e.from().value());
        out.put("to", e.to().value());
        out.put("kind", e.kind());
        out.put("state", record.state().wire());
        var timeline = out.putArray("timeline");
        for (TimelineEntry step : record.timeline()) {
            ObjectNode entry = timeline.addObject();
            entry.put("state", step.state().wire());
            entry.put("at", Json.time(step.at()));
            entry.put("detail", step.detail());
        }
        out.put("corrId", e.corrId().orElse(null));
        out.put("threadId", e.threadId().orElse(null));
        out.put("createdAt", Json.time(e.createdAt()));
        out.set("envelope", Json.envelopeTree(e));
        return out;
    }

    static ObjectNode audit(AuditRecord record) {
        var a = record.entry();
        ObjectNode out = Json.object();
        out.put("at", Json.time(a.at()));
        out.put("actor", a.actor());
        out.put("action", a.action());
        out.put("target", a.target());
        out.put("decision", a.decision().wire());
        out.put("reason", a.reason());
        out.put("envelopeId", a.envelopeId().orElse(null));
        out.put("policyVersion", a.policyVersion());
        return out;
    }
}
