package dev.parley.core;

/**
 * A token-bucket rate: {@code perSecond} tokens flow in each second, up to {@code burst}
 * held at once. One request takes one token.
 */
public record Rate(double perSecond, long burst) {
    public static final double MAX_PER_SECOND = 1_000_000;
    public static final long MAX_BURST = 10_000_000;

    public Rate {
        if (!(perSecond > 0) || perSecond > MAX_PER_SECOND || Double.isNaN(perSecond)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "rate must be a number above 0 and at most "
                    + (long) MAX_PER_SECOND + " (requests per second)");
        }
        if (burst < 1 || burst > MAX_BURST) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "burst must be an integer between 1 and " + MAX_BURST);
        }
    }

    /** {@code count} requests a minute, all of which may come at once. */
    public static Rate perMinute(int count) {
        return new Rate(count / 60.0, count);
    }
}
