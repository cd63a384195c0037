package io.github.redislock.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The watchdog's batched renewal of one lock type: a {@code *-renew-many.lua} script that renews many holdings in one
 * call and answers with one character per holding ('1' renewed, '0' gone). Its KEYS are each holding's Redis keys, one
 * holding after another; its ARGV the script's shared arguments, then each holding's owner id, then their lease in ms
 * (one call per lease: Redis makes a string of every argument, and the watchdog's holdings share one lease). In Redis
 * Cluster, {@link #nodeOf} says which master serves a holding (the watchdog batches each master's holdings apart), and
 * a batch goes to its master as one call of the script's per-master form ({@link #perMaster}: Redis 7.0 and later),
 * else as one call per hash slot.
 */
final class BatchRenewal implements Renewer.Many {

    private static final Logger log = LoggerFactory.getLogger(BatchRenewal.class);

    private final ScriptRunner redis;
    private final RedisScript<String> script;
    /**
     * The script as one call per Cluster master takes it: flagged {@code allow-cross-slot-keys} (Redis 7.0+), with only
     * the first key declared, which routes the call to its master, and every key passed as an argument (ARGV[1] their
     * count, then the keys, then the script's own arguments), since Redis refuses declared keys of several slots even
     * then. A key another master serves fails the call ("non local key"); the batch then goes out per slot. {@code null}
     * once Redis refused the flag (before 7.0): one call per slot from then on.
     */
    private volatile @Nullable RedisScript<String> perMaster;
    private final Function<String, List<String>> redisKeys;
    private final String[] sharedArgs;

    private BatchRenewal(ScriptRunner redis, RedisScript<String> script, Function<String, List<String>> redisKeys,
            String[] sharedArgs) {
        this.redis = redis;
        this.script = script;
        this.redisKeys = redisKeys;
        this.sharedArgs = sharedArgs;
        this.perMaster = RedisScript.of("""
                #!lua flags=allow-cross-slot-keys
                local count = tonumber(ARGV[1])
                local keys, args = {}, {}
                for i = 1, count do keys[i] = ARGV[1 + i] end
                for i = count + 2, #ARGV do args[#args + 1] = ARGV[i] end
                local KEYS, ARGV = keys, args
                """ + script.getScriptAsString(), String.class);
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
        if (!redis.isClusterOrUnknown()) {
            return null; // one Redis: no key to build, no slot to hash
        }
        return redis.masterOf(redisKeys.apply(key).get(0));
    }

    private int slot(String key) {
        return ClusterSlotHashUtil.calculateSlot(redisKeys.apply(key).get(0));
    }

    @Override
    public Renewer.Replies renew(List<String> keys, List<String> owners, long[] leaseMillis) {
        for (long lease : leaseMillis) {
            if (lease != leaseMillis[0]) {
                return renewByLease(keys, owners, leaseMillis);
            }
        }
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
        if (bySlot.size() > 1 && perMaster != null && redis.pipelinesScriptCalls() && oneMaster(bySlot.keySet())) {
            String outcomes = renewOnItsMaster(keys, owners, leaseMillis, bySlot.keySet().iterator().next());
            if (outcomes != null) {
                return new Renewer.Replies(outcomes, null);
            }
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

    /**
     * Renews holdings of several leases as one call per lease, since the script takes one lease for all. The watchdog's
     * batches are each of one lease (a hand-over adopted with a lease of its own goes in a batch apart); this serves any
     * other caller.
     */
    private Renewer.Replies renewByLease(List<String> keys, List<String> owners, long[] leaseMillis) {
        Map<Long, List<Integer>> byLease = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            byLease.computeIfAbsent(leaseMillis[i], lease -> new ArrayList<>()).add(i);
        }
        char[] outcomes = new char[keys.size()];
        RuntimeException failure = null;
        for (Map.Entry<Long, List<Integer>> lease : byLease.entrySet()) {
            List<Integer> which = lease.getValue();
            long[] leases = new long[which.size()];
            Arrays.fill(leases, lease.getKey());
            Renewer.Replies replies;
            try {
                replies = renew(which.stream().map(keys::get).toList(), which.stream().map(owners::get).toList(), leases);
            } catch (RuntimeException e) {
                replies = new Renewer.Replies(String.valueOf(Renewer.Replies.NOT_ASKED).repeat(which.size()), e);
            }
            for (int j = 0; j < which.size(); j++) {
                outcomes[which.get(j)] = replies.outcomes().charAt(j);
            }
            if (replies.failure() != null) {
                failure = replies.failure();
            }
        }
        return new Renewer.Replies(new String(outcomes), failure);
    }

    private boolean oneMaster(Iterable<Integer> slots) {
        String master = null;
        for (int slot : slots) {
            String of = redis.clusterNodes.masterOf(slot);
            if (of == null || master != null && !master.equals(of)) {
                return false;
            }
            master = of;
        }
        return master != null;
    }

    /**
     * Renews every holding of a batch of one Cluster master's holdings in one call of {@link #perMaster}, whatever their
     * slots; {@code null} when it could not (the batch then goes out per slot).
     */
    private @Nullable String renewOnItsMaster(List<String> keys, List<String> owners, long[] leaseMillis, int slot) {
        RedisScript<String> node = perMaster;
        if (node == null) {
            return null;
        }
        List<Integer> all = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            all.add(i);
        }
        List<String> scriptKeys = new ArrayList<>();
        String[] args = scriptArgs(owners, leaseMillis, all, scriptKeys, keys);
        String[] nodeArgs = new String[1 + scriptKeys.size() + args.length];
        nodeArgs[0] = Integer.toString(scriptKeys.size());
        for (int i = 0; i < scriptKeys.size(); i++) {
            nodeArgs[1 + i] = scriptKeys.get(i);
        }
        System.arraycopy(args, 0, nodeArgs, 1 + scriptKeys.size(), args.length);
        Object reply = redis.runAllForText(node, List.<byte[][]>of(ScriptRunner.encode(scriptKeys.get(0))),
                List.<byte[][]>of(ScriptRunner.encode(nodeArgs)), slot)[0];
        if (reply instanceof String text && text.length() == keys.size()) {
            return text;
        }
        if (reply instanceof RuntimeException e && refusesScriptFlags(e)) {
            perMaster = null;
            log.info("Redis refused a script flagged allow-cross-slot-keys (before Redis 7.0?): the watchdog renews a "
                    + "Cluster master's locks with one call per hash slot ({})", e.getMessage());
        } else {
            redis.clusterNodes.lookUpSoon(); // a key another master serves: the topology changed (a failover, a resharding)
        }
        return null;
    }

    private static boolean refusesScriptFlags(RuntimeException e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message != null && (message.contains("Error compiling script") || message.contains("shebang")
                    || message.contains("Unexpected flag"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The script's arguments for the holdings {@code which}, whose Redis keys it adds to {@code scriptKeys}: the shared
     * ones, each holding's owner id, then their lease (one for all, see {@link #renew}).
     */
    private String[] scriptArgs(List<String> owners, long[] leaseMillis, List<Integer> which, List<String> scriptKeys,
            List<String> keys) {
        String[] args = Arrays.copyOf(sharedArgs, sharedArgs.length + which.size() + 1);
        int arg = sharedArgs.length;
        for (int i : which) {
            scriptKeys.addAll(redisKeys.apply(keys.get(i)));
            args[arg++] = owners.get(i);
        }
        args[arg] = Long.toString(leaseMillis[which.get(0)]);
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
