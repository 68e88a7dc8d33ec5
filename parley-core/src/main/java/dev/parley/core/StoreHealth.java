package dev.parley.core;

/** Whether the store takes writes: reported by {@code /healthz}; reads work in every state. */
public enum StoreHealth {
    /** The last commit went through. */
    OK,
    /** The last commit failed because the disk is full; writes answer {@link ErrorCode#STORAGE_FULL}. */
    FULL,
    /** The last commit failed for another reason (an I/O error, say); writes answer {@link ErrorCode#INTERNAL}. */
    FAILING;

    /** The lowercase wire form, e.g. {@code full}. */
    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
