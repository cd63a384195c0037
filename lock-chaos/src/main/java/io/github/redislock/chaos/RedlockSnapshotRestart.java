package io.github.redislock.chaos;

import io.github.redislock.test.RedisNodes;
import io.github.redislock.test.RedisServerProcess;

/**
 * The full fault run's Redlock restart from persisted data: two masters (another pair each repetition) save an RDB
 * snapshot, the workers go on locking for a moment (grants the snapshot does not hold), and the two are killed with
 * SIGKILL and started again from their directories, so they come back with the restart marker but without the latest
 * locks. A node restarted so must sit out its restart delay like one restarted empty: no overlap.
 */
final class RedlockSnapshotRestart {

    static final String NAME = "Redlock, 5 masters: a killed minority restarted from its RDB snapshot";
    /** How long the workers lock between the snapshot and the kill. */
    static final long AFTER_SAVE_MILLIS = 300;

    private RedlockSnapshotRestart() {
    }

    static void inject(RedisNodes nodes, int repetition) throws InterruptedException {
        RedisServerProcess first = nodes.node(repetition % 5);
        RedisServerProcess second = nodes.node((repetition + 2) % 5);
        first.command("SAVE");
        second.command("SAVE");
        Thread.sleep(AFTER_SAVE_MILLIS);
        first.kill();
        second.kill();
        first.restart(); // loads dump.rdb from its directory
        second.restart();
    }
}
