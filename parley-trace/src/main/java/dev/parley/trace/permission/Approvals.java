package dev.parley.trace.permission;

import java.time.Duration;
import java.util.Optional;

/** The way a node is asked: a question it is sent, and the answer it gives within a time. */
public interface Approvals {
    /**
     * Asks {@code approver} about {@code ask} and waits up to {@code timeout} for its answer;
     * none when it gave none in time. A refusal to ask at all (the approver is out of reach)
     * is thrown, as the hub's refusal of any send is.
     */
    Optional<Answer> ask(PermissionAsk ask, String approver, Duration timeout) throws InterruptedException;
}
