package dev.parley.server.policy;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.parley.core.EngagePatterns;
import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Engage patterns as RE2 expressions: matching takes time linear in the text, whatever the
 * pattern, so no pattern an admin sets can stall the hub on a chat message. Compiled patterns
 * are kept (the most recent {@link #KEPT}); policy rules' {@code matches()} reuse them too
 * ({@link PolicyCompiler}), so a rule's regex is compiled once, not at every send.
 */
public final class Re2Patterns implements EngagePatterns {
    private static final int KEPT = 256;
    private final Map<String, Pattern> compiled = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Pattern> eldest) {
            return size() > KEPT;
        }
    });

    @Override
    public void requireValid(String pattern) {
        compile(pattern);
    }

    @Override
    public boolean find(String pattern, String text) {
        return compile(pattern).matcher(text).find();
    }

    /** The pattern compiled earlier, if it is still kept. */
    Optional<Pattern> known(String pattern) {
        return Optional.ofNullable(compiled.get(pattern));
    }

    /** Keeps {@code pattern}, compiled. */
    Pattern keep(String pattern) {
        Pattern fresh = Pattern.compile(pattern);
        compiled.put(pattern, fresh);
        return fresh;
    }

    private Pattern compile(String pattern) {
        try {
            return known(pattern).orElseGet(() -> keep(pattern));
        } catch (PatternSyntaxException e) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "engagePattern is not a regular expression (RE2"
                    + " syntax): " + e.getDescription() + " in /" + pattern + "/");
        }
    }
}
