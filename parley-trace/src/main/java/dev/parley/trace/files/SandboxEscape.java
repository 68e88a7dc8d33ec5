package dev.parley.trace.files;

/**
 * A name a {@link Sandbox} refuses, whatever the reason: it leads out of the working directory,
 * it is not a name (empty, absolute, holding NUL), or it names what cannot be read or written
 * there (nothing, a directory, a device). The message quotes the name as it was given and says
 * why in the user's words; it never holds the host path of the working directory.
 */
public final class SandboxEscape extends RuntimeException {
    SandboxEscape(String message) {
        super(message);
    }
}
