package dev.parley.core;

import java.util.Optional;

/** Contract schemas of capabilities: JSON Schema documents, checked when published and against each result. */
public interface Contracts {
    /** Refuses ({@code invalid_schema}) a document that is not a usable schema. */
    void requireUsable(JsonText schema);

    /** Why {@code value} breaks {@code schema}, or empty when it meets it. */
    Optional<String> breach(JsonText schema, JsonText value);
}
