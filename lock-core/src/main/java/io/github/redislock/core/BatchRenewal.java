package io.github.redislock.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The watchdog's batched renewal of one lock type: a {@code *-renew-many.lua} script that renews many holdings in one
 * call and answers with one character per holding ('1' renewed, '0' gone). Its KEYS are each holding's Redis keys, one
 * holding after another; its ARGV the script's shared arguments, then each holding's owner id and lease in ms. In Redis
 * Cluster, where one call takes keys of one hash slot only, {@link #nodeOf} says which master serves a holding (the
 * watchdog batches each master's holdings apart), and a batch is sent as one call per slot.
 */
final class BatchRenewal implements Renewer.Many {

    private final ScriptRunner redis;
    private final RedisScript<String> script;
    private final Function<String, List<String>> redisKeys;
    private final String[] sharedArgs;

    private BatchRenewal(ScriptRunner redis, RedisScript<String> script, Function<String, List<String>> redisKeys,
            String[] sharedArgs) {
        this.redis = redis;
        this.script = script;
        this.redisKeys = redisKeys;
        this.sharedArgs = sharedArgs;
    }

    /**
     * @param redisKeys a holding's Redis keys, as the script takes them, from the lock's key
     * @return the batched renewal, or {@code null} with replica acknowledgement, whose renewals are each acknowledged
     *         alone
     */
    static Renewer.Many of(ScriptRunner redis, RedisScript<String> script, Function<String, List<String>> redisKeys,
            String... sharedArgs) {
        return redis.acknowledges() ? null : new BatchRenewal(redis, script, redisKeys, sharedArgs);
    }

    @Override
    public int batchOf(String key) {
        if (!redis.isClusterOrUnknown()) {
            return 0;
        }
        if (redis.onSharedLettuceConnection()) {
            return -1; // Lettuce pipelines the calls of a batch, each to its slot's master, whichever that is
        }
        // Jedis pipelines a master's calls on a connection to it: one slot a batch when that master is not known yet
        int slot = slot(key);
        return redis.pipelinesScriptCalls() && redis.clusterNodes.masterOf(slot) != null ? -1 : slot;
    }

    @Override
    public String nodeOf(String key) {
        return redis.isClusterOrUnknown() ? redis.clusterNodes.masterOf(slot(key)) : null;
    }

    private int slot(String key) {
        return ClusterSlotHashUtil.calculateSlot(redisKeys.apply(key).get(0));
    }

    @Override
    public Renewer.Replies renew(List<String> keys, List<String> owners, long[] leaseMillis) {
        if (!redis.isCluster()) {
            List<Integer> all = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) {
                all.add(i);
            }
            return new Renewer.Replies(renewInOneCall(keys, owners, leaseMillis, all), null);
        }
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            bySlot.computeIfAbsent(slot(keys.get(i)), slot -> new ArrayList<>()).add(i);
        }
        char[] outcomes = new char[keys.size()];
        Arrays.fill(outcomes, Renewer.Replies.NOT_ASKED);
        RuntimeException failure = null;
        if (bySlot.size() > 1 && redis.pipelinesScriptCalls()) {
            List<byte[][]> callKeys = new ArrayList<>(bySlot.size());
            List<byte[][]> callArgs = new ArrayList<>(bySlot.size());
            for (List<Integer> slot : bySlot.values()) {
                List<String> scriptKeys = new ArrayList<>();
                callArgs.add(ScriptRunner.encode(scriptArgs(owners, leaseMillis, slot, scriptKeys, keys)));
                callKeys.add(ScriptRunner.encode(scriptKeys.toArray(String[]::new)));
            }
            Object[] replies = redis.runAllForText(script, callKeys, callArgs, bySlot.keySet().iterator().next());
            int call = 0;
            for (List<Integer> slot : bySlot.values()) {
                Object reply = replies[call++];
                if (reply instanceof String text && text.length() == slot.size()) {
                    for (int j = 0; j < slot.size(); j++) {
                        outcomes[slot.get(j)] = text.charAt(j);
                    }
                } else {
                    failure = reply instanceof RuntimeException e ? e
                            : new IllegalStateException("The batched renewal answered '" + reply + "' for " + slot.size()
                                    + " holdings");
                    redis.clusterNodes.lookUpSoon(); // in case the slot moved (a failover, a resharding)
                }
            }
            return new Renewer.Replies(new String(outcomes), failure);
        }
        for (List<Integer> slot : bySlot.values()) {
            try {
                String replies = renewInOneCall(keys, owners, leaseMillis, slot);
                for (int j = 0; j < slot.size(); j++) {
                    outcomes[slot.get(j)] = replies.charAt(j);
                }
            } catch (RuntimeException e) { // that slot's node: the others still count
                failure = e;
                redis.clusterNodes.lookUpSoon(); // in case the slot moved (a failover, a resharding)
            }
        }
        return new Renewer.Replies(new String(outcomes), failure);
    }

    /** The script's arguments for the holdings {@code which}, whose Redis keys it adds to {@code scriptKeys}. */
    private String[] scriptArgs(List<String> owners, long[] leaseMillis, List<Integer> which, List<String> scriptKeys,
            List<String> keys) {
        String[] args = Arrays.copyOf(sharedArgs, sharedArgs.length + 2 * which.size());
        int arg = sharedArgs.length;
        for (int i : which) {
            scriptKeys.addAll(redisKeys.apply(keys.get(i)));
            args[arg++] = owners.get(i);
            args[arg++] = Long.toString(leaseMillis[i]);
        }
        return args;
    }

    private String renewInOneCall(List<String> keys, List<String> owners, long[] leaseMillis, List<Integer> which) {
        List<String> scriptKeys = new ArrayList<>(which.size());
        String[] args = scriptArgs(owners, leaseMillis, which, scriptKeys, keys);
        String replies = redis.runForText(script, scriptKeys, args);
        if (replies == null || replies.length() != which.size()) {
            throw new IllegalStateException("The batched renewal answered '" + replies + "' for " + which.size()
                    + " holdings");
        }
        return replies;
    }
}
