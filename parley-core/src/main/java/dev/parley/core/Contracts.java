package dev.parley.core;

import java.util.Optional;

/** Contract schemas of capabilities: JSON Schema documents, checked when published and against each result. */
public interface Contracts {
    /**
     * Refuses ({@code invalid_schema}) a document that is not a usable schema, or, unless
     * {@code trusted} (the admin's), one with regular expressions ({@code pattern},
     * {@code patternProperties}): they would run on the hub against every result.
     */
    void requireUsable(JsonText schema, boolean trusted);

    /** Why {@code value} breaks {@code schema}, or empty when it meets it. */
    Optional<String> breach(JsonText schema, JsonText value);
}
