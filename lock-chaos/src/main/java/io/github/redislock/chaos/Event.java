package io.github.redislock.chaos;

/**
 * One entry of the history the resource records, timestamped on the resource's clock.
 *
 * @param nanos when the resource saw it
 * @param type {@code read}, {@code write}, {@code abandon} (the holder saw {@code isHeld()} false and did not
 *        write), {@code lost} (the holder was told its lock was lost), {@code mark} (a fault began or ended)
 * @param worker process and thread of the worker, e.g. {@code w2-1}; the mark's name for marks
 * @param token the fencing token of the holding, 0 for marks
 * @param value the value read, or written
 * @param accepted for writes: whether the resource accepted it
 */
public record Event(long nanos, String type, String worker, long token, long value, boolean accepted) {

    String line() {
        return nanos + " " + type + " " + worker + " " + token + " " + value + " " + accepted;
    }

    static Event parse(String line) {
        String[] p = line.split(" ");
        return new Event(Long.parseLong(p[0]), p[1], p[2], Long.parseLong(p[3]), Long.parseLong(p[4]), Boolean.parseBoolean(p[5]));
    }
}
