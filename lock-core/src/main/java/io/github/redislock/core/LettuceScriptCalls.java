package io.github.redislock.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.stream.Collectors;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs the lock scripts straight on the shared native connection of a {@link LettuceConnectionFactory} (standalone,
 * Sentinel, master/replica or Cluster), the connection Spring Data Redis itself sends every plain command of the
 * application on. Spring Data Redis's own path to it makes a {@code LettuceConnection} per call and converts each
 * call and reply through its invoker: calling-thread time and garbage a lock call need not pay. Here a call is
 * EVALSHA (EVAL when Redis answers NOSCRIPT), awaited for the factory's command timeout and cancelled after it, as
 * Spring Data Redis does, and a failure is translated by the factory's own exception translator, so callers see the same
 * {@link DataAccessException}s as through a template.
 * <p>
 * A reply is awaited by {@link ReplyWait}: a lone call spins on it (up to 500 µs) before it parks, because on Lettuce the
 * reply arrives on Netty's event loop thread and waking a parked caller costs more than the round trip itself.
 * <p>
 * Only for a factory that shares its native connection (Spring Boot's default); without sharing, Spring Data Redis
 * gives each connection a dedicated native one (a pool borrow) and {@link ScriptRunner} keeps to that path. Only
 * loaded when Lettuce is on the class path.
 */
final class LettuceScriptCalls {

    private final LettuceConnectionFactory factory;
    private final ReplyWait replies = new ReplyWait(ReplyWait.SPIN_NANOS);
    /** The shared connection and its commands, looked up again when it was closed (a factory reset) or is down. */
    private volatile Shared shared;

    private LettuceScriptCalls(LettuceConnectionFactory factory) {
        this.factory = factory;
    }

    /** Script calls on {@code factory}'s shared native connection, or {@code null} when it has none to offer. */
    static LettuceScriptCalls on(RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection()
                ? new LettuceScriptCalls(lettuce) : null;
    }

    private record Shared(StatefulConnection<byte[], byte[]> connection,
            BaseRedisAsyncCommands<byte[], byte[]> commands, long timeoutMillis) {
    }

    /**
     * Runs a script with EVALSHA, and with EVAL when Redis does not have it (a restart, a failover, SCRIPT FLUSH).
     *
     * @param sha1 the script's SHA-1 (hex digits, as bytes)
     * @param integer whether the reply is an integer ({@code Long}); else a bulk string ({@code byte[]})
     * @throws DataAccessException as Spring Data Redis's Lettuce connection would throw it
     */
    <T> T run(byte[] sha1, byte[] script, boolean integer, byte[][] keys, byte[][] args) {
        Shared shared = shared();
        boolean alone = replies.sending();
        try {
            try {
                return replies.await(send(shared, CommandType.EVALSHA, sha1, integer, keys, args), shared.timeoutMillis, alone);
            } catch (RuntimeException e) {
                if (!ScriptRunner.isNoScript(e)) {
                    throw e;
                }
                return replies.await(send(shared, CommandType.EVAL, script, integer, keys, args), shared.timeoutMillis, alone);
            }
        } catch (RuntimeException e) {
            throw ScriptRunner.translated(factory, e);
        } finally {
            replies.done();
        }
    }

    /**
     * Runs EVALSHA once per entry, every call sent before any reply is awaited: on a Cluster connection, the calls
     * to one master go out pipelined on its node connection.
     *
     * @return per call its reply ({@code byte[]}), or the exception it failed with (NOSCRIPT too, for the caller to load
     *         the script and send the calls again), translated as {@link #run} does
     */
    Object[] runAll(byte[] sha1, List<byte[][]> keys, List<byte[][]> args) {
        Object[] out = new Object[keys.size()];
        Shared shared;
        try {
            shared = shared();
        } catch (RuntimeException e) {
            Arrays.fill(out, translate(e));
            return out;
        }
        List<RedisFuture<Object>> sent = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            sent.add(send(shared, CommandType.EVALSHA, sha1, false, keys.get(i), args.get(i)));
        }
        for (int i = 0; i < out.length; i++) {
            try {
                out[i] = replies.await(sent.get(i), shared.timeoutMillis, false);
            } catch (RuntimeException e) {
                out[i] = translate(e);
            }
        }
        return out;
    }

    /**
     * Sends {@code EVALSHA sha1 numkeys key... arg...} (or EVAL with the script's text) on the shared connection, as
     * Lettuce's own {@code evalsha} would (on a Cluster connection, to the master of the first key's slot).
     */
    @SuppressWarnings("unchecked")
    private static <T> RedisFuture<T> send(Shared shared, CommandType command, byte[] script, boolean integer,
            byte[][] keys, byte[][] args) {
        CommandOutput<byte[], byte[], ?> output = integer ? new IntegerOutput<>(ByteArrayCodec.INSTANCE)
                : new ValueOutput<>(ByteArrayCodec.INSTANCE);
        return (RedisFuture<T>) shared.commands.dispatch(command, output, new ScriptArgs(script, keys, args));
    }

    /**
     * A script call's arguments (the script's SHA-1 or text, the number of keys, the keys, the arguments), written to
     * the connection as they are. Lettuce's own {@code evalsha} wraps each key and argument in an object of its own and
     * collects them in a list that grows as they are added: with the lock scripts' 4 keys and 7 to 9 arguments, that
     * was most of what a call allocated on the calling thread. The first key tells a Cluster connection where to send
     * the call, as it does for Lettuce's own.
     */
    static final class ScriptArgs extends CommandArgs<byte[], byte[]> {

        private static final byte[] CRLF = {'\r', '\n'};

        private final byte[] script;
        private final byte[][] keys;
        private final byte[][] args;

        ScriptArgs(byte[] script, byte[][] keys, byte[][] args) {
            super(ByteArrayCodec.INSTANCE);
            this.script = script;
            this.keys = keys;
            this.args = args;
        }

        @Override
        public int count() {
            return 2 + keys.length + args.length;
        }

        @Override
        public ByteBuffer getFirstEncodedKey() {
            return keys.length == 0 ? null : ByteBuffer.wrap(keys[0]);
        }

        @Override
        public void encode(ByteBuf buf) {
            bulk(buf, script);
            buf.writeByte('$');
            decimal(buf, digits(keys.length));
            buf.writeBytes(CRLF);
            decimal(buf, keys.length);
            buf.writeBytes(CRLF);
            for (byte[] key : keys) {
                bulk(buf, key);
            }
            for (byte[] arg : args) {
                bulk(buf, arg);
            }
        }

        /** One RESP bulk string: {@code $<length>\r\n<bytes>\r\n}. */
        private static void bulk(ByteBuf buf, byte[] value) {
            buf.writeByte('$');
            decimal(buf, value.length);
            buf.writeBytes(CRLF);
            buf.writeBytes(value);
            buf.writeBytes(CRLF);
        }

        /** Writes {@code n} (0 or more) in decimal ASCII digits. */
        static void decimal(ByteBuf buf, int n) {
            if (n >= 10) {
                decimal(buf, n / 10);
            }
            buf.writeByte('0' + n % 10);
        }

        /** How many decimal digits {@code n} (0 or more) has. */
        static int digits(int n) {
            int digits = 1;
            for (int rest = n / 10; rest > 0; rest /= 10) {
                digits++;
            }
            return digits;
        }

        @Override
        public String toCommandString() {
            return "<script> " + keys.length + " " + Arrays.stream(keys).map(key -> new String(key, StandardCharsets.UTF_8))
                    .collect(Collectors.joining(" ")) + " <" + args.length + " arguments>";
        }

        @Override
        public String toString() {
            return getClass().getSimpleName() + " [" + toCommandString() + "]";
        }
    }

    private RuntimeException translate(RuntimeException e) {
        return ScriptRunner.translated(factory, e);
    }

    private Shared shared() {
        Shared current = shared;
        if (current != null && current.connection.isOpen()) {
            return current;
        }
        return lookUpShared();
    }

    /**
     * Asks the factory for its shared connection: a new one after {@code resetConnection()}, the same one (still
     * reconnecting) while Redis is down, and an exception when the factory was stopped.
     */
    private synchronized Shared lookUpShared() {
        if (!factory.getShareNativeConnection()) {
            throw new IllegalStateException("The LettuceConnectionFactory stopped sharing its native connection "
                    + "after the lock template was made; make the template again");
        }
        RedisConnection connection = factory.getConnection();
        try {
            Object commands = connection.getNativeConnection();
            StatefulConnection<byte[], byte[]> stateful;
            if (commands instanceof RedisAsyncCommands<?, ?> standalone) {
                stateful = cast(standalone.getStatefulConnection());
            } else if (commands instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
                stateful = cast(cluster.getStatefulConnection());
            } else {
                throw new IllegalStateException("Unexpected native Lettuce connection " + commands.getClass().getName());
            }
            Shared found = new Shared(stateful, cast(commands), factory.getTimeout());
            shared = found;
            return found;
        } finally {
            connection.close(); // a shared native connection stays open
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object o) {
        return (T) o;
    }

    /**
     * How a calling thread waits for a script's reply. Lettuce completes the reply on its event loop thread; a parked
     * caller is then woken by the kernel and scheduled again, which on a small machine costs more than a loopback
     * round trip, and a caller that parks leaves its core idle, which makes the next wake-up slow too. Compared on a
     * small machine with two EVALSHA of {@code return 1} one after the other (the floor the benchmark's S1 measures, see
     * docs/benchmarks.md): parking at once was the slowest; a short spin still saw some replies arrive after it, and such
     * a call pays the spin and the wake-up both; a spin of {@link #SPIN_NANOS} saw its reply once warmed up.
     * So a call spins on the reply for up to {@link #SPIN_NANOS} (500 µs) before it parks, but only when spinning can
     * pay:
     * <ul>
     *     <li>it is the only lock call of this connection in flight; with several, the event loop is busy with their
     *     replies and a spinning caller would take the CPU it needs (many threads lost throughput when every caller
     *     spun);</li>
     *     <li>recent spins mostly saw their reply arrive: when the machine is busy, replies come later than the spin
     *     and the spinning stops (once more than a third of the spins ran out), probed again every
     *     {@link #PROBE_EVERY}th call. It comes back quickly because a burst of lock calls after a quiet spell
     *     starts slow: the first replies come late while the machine's idle cores wake up. (The benchmark's S1, in
     *     blocks taking turns with parked calls, came out better with two credits per run-out spin and a probe every
     *     16th call than with four and every 64th.)</li>
     *     <li>the JVM has more than one processor: on one, the event loop thread can only complete the reply once the
     *     spinning caller is taken off the CPU;</li>
     *     <li>the other processes of the machine leave this JVM a processor: a spin keeps a processor that would idle
     *     busy, and on a machine whose processors are all in use it takes one from the others (other JVMs locking
     *     the same key, Redis itself). The machine's recent CPU load less this process's, sampled at most every
     *     {@link #LOAD_SAMPLE_NANOS} (250 ms) while lone calls come, is compared with {@code (processors - 1) /
     *     processors}. (In a container the JVM reads that load from the cgroup's files, tens of KB of buffers per
     *     sample on the calling thread: sampled every 50 ms, it was about a seventh of what an uncontended
     *     lock+unlock allocated on a busy S1.) With 4 JVMs on one key on 2 cores (the benchmark's S3 across JVMs on Lettuce), runs taken in
     *     turn gave about 1,300 hand-overs a second spinning, 1,800 to 2,200 with this check; S1 kept spinning;</li>
     *     <li>not on a virtual thread, whose carrier would be kept from other virtual threads;</li>
     *     <li>spinning paid lately: lone calls that spun got their replies at least a fifth
     *     ({@link ReplyWait#SPIN_GAIN_PERCENT}) sooner than lone calls that parked (moving averages over about the last
     *     {@link #AVERAGE_OVER} calls of each kind). While it pays, every
     *     {@link #PROBE_EVERY}th lone call parks to keep the parked figure current; while it does not, every
     *     {@link #PROBE_EVERY}th spins. Whether it pays changes with the machine: on this project's 2-core benchmark
     *     machine one day the spin took S1 on Lettuce to 0.61x its parked floor, another day to 1.3-1.4x it, where
     *     runs taken in turn with this check gave 1.06x and half the calling thread's CPU. On a third day spinning
     *     took S1's p50 only to about 0.9x that of parking, at 1.7x the calling thread's CPU: hence the fifth.</li>
     * </ul>
     * The spin yields the processor on every turn ({@link Thread#yield()}): a thread that needs it (Lettuce's event
     * loop, a Redis server on the same host, the lock calls of other JVMs) runs first, and only a processor with
     * nothing else to do keeps spinning. With several JVMs on one key on a small machine (the benchmark's S3 and S7
     * across JVMs, on Lettuce) and uncontended (S1), yielding did better than a busy spin ({@link Thread#onSpinWait()});
     * the figures are in docs/benchmarks.md.
     * <p>
     * A spin costs the calling thread's CPU for as long as the reply takes (the benchmark's S1 reports it per
     * lock+unlock). It is bounded, and replies later than the bound stop it: once spinning stopped, the cost is one
     * {@link #SPIN_NANOS} probe per {@link #PROBE_EVERY} lone calls, about 31 µs of CPU per call at worst.
     */
    static final class ReplyWait {

        static final long SPIN_NANOS = 500_000;
        /**
         * How much sooner, in per cent of a parked call's wait, spun calls must get their replies for lone calls to
         * spin: a spin costs the calling thread's CPU for the whole wait, a gain of a few per cent is not worth it.
         */
        static final int SPIN_GAIN_PERCENT = 20;
        static final int PROBE_EVERY = 16;
        static final long LOAD_SAMPLE_NANOS = 250_000_000;
        private static final int MAX_CREDIT = 16;
        private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

        private final long spinNanos;
        /** Whether spinning can pay at all: another processor can run the event loop meanwhile. */
        private final boolean multiprocessor;
        /**
         * The share of the machine's processors the other processes used lately (0 to 1), or a negative number when
         * it cannot be told; asked at most every {@link #LOAD_SAMPLE_NANOS}.
         */
        private final DoubleSupplier othersLoad;
        /** Above this {@link #othersLoad}, the others leave this JVM no processor. */
        private final double busyAbove;
        private volatile long loadSampledAt;
        private volatile boolean othersBusy;
        private final AtomicInteger inFlight = new AtomicInteger();
        /** Spins that saw their reply add one, spins that ran out take two; at zero the caller parks at once. */
        private volatile int credit = MAX_CREDIT;
        private volatile int parkedCalls;
        /** Lone calls that could spin, counted for the comparison probes ({@link #spinsThisTime()}). */
        private volatile int loneCalls;
        /** How long lone calls lately waited for their reply, spinning and parked (moving averages, ns; 0: none yet). */
        private volatile long spunNanos;
        private volatile long parkedNanos;
        private static final int AVERAGE_OVER = 8;

        ReplyWait(long spinNanos) {
            this(spinNanos, Runtime.getRuntime().availableProcessors());
        }

        ReplyWait(long spinNanos, int processors) {
            this(spinNanos, processors, ReplyWait::othersLoad);
        }

        ReplyWait(long spinNanos, int processors, DoubleSupplier othersLoad) {
            this.spinNanos = spinNanos;
            this.multiprocessor = processors > 1;
            this.othersLoad = othersLoad;
            this.busyAbove = (processors - 1) / (double) processors;
            this.loadSampledAt = System.nanoTime() - LOAD_SAMPLE_NANOS;
        }

        /** Counts a call as in flight; returns whether it is the only one. Pair with {@link #done()}. */
        boolean sending() {
            return inFlight.incrementAndGet() == 1;
        }

        void done() {
            inFlight.decrementAndGet();
        }

        <T> T await(RedisFuture<T> reply, long timeoutMillis, boolean alone) {
            if (!alone) {
                return LettuceFutures.awaitOrCancel(reply, timeoutMillis, TimeUnit.MILLISECONDS);
            }
            long start = System.nanoTime();
            boolean spin = shouldSpin();
            if (spin && credit > 0) {
                spin = spinsThisTime();
            }
            if (spin) {
                long deadline = start + spinNanos;
                while (!reply.isDone() && System.nanoTime() - deadline < 0) {
                    Thread.yield();
                }
                // racy updates only blur the heuristic
                credit = reply.isDone() ? Math.min(MAX_CREDIT, credit + 1) : Math.max(0, credit - 2);
            }
            try {
                return LettuceFutures.awaitOrCancel(reply, timeoutMillis, TimeUnit.MILLISECONDS);
            } finally {
                long took = System.nanoTime() - start;
                if (spin) {
                    spunNanos = average(spunNanos, took);
                } else {
                    parkedNanos = average(parkedNanos, took);
                }
            }
        }

        /**
         * Whether a lone call that may spin does: while spinning paid lately ({@link #spinPays()}: its replies came at least
         * {@link #SPIN_GAIN_PERCENT} % sooner than parked calls' did), every {@link #PROBE_EVERY}th such call parks, to keep the parked figure current; while it did
         * not, only every {@link #PROBE_EVERY}th spins.
         */
        private boolean spinsThisTime() {
            int call = loneCalls + 1;
            loneCalls = call;
            boolean probe = call % PROBE_EVERY == 0;
            return spinPays() != probe;
        }

        /**
         * Whether spun calls lately got their replies at least {@link #SPIN_GAIN_PERCENT} % sooner than parked ones (yes
         * while either is not known).
         */
        boolean spinPays() {
            long spun = spunNanos;
            long parked = parkedNanos;
            return spun == 0 || parked == 0 || pays(spun, parked);
        }

        /** Whether a spun wait of {@code spun} ns saves enough of a parked one of {@code parked} ns to be worth its CPU. */
        static boolean pays(long spun, long parked) {
            return spun * 100 <= parked * (100 - SPIN_GAIN_PERCENT);
        }

        /** A moving average over about the last {@link #AVERAGE_OVER} calls of its kind; 0 is "not known yet". */
        private static long average(long average, long took) {
            long sample = Math.max(1, took);
            return average == 0 ? sample : Math.max(1, average + (sample - average) / AVERAGE_OVER);
        }

        private boolean shouldSpin() {
            if (!multiprocessor || othersBusy()) {
                return false;
            }
            if (credit == 0) {
                int parked = parkedCalls + 1;
                parkedCalls = parked;
                if (parked % PROBE_EVERY != 0) {
                    return false;
                }
            }
            return !isVirtual(Thread.currentThread());
        }

        int credit() {
            return credit;
        }

        private boolean othersBusy() {
            long now = System.nanoTime();
            if (now - loadSampledAt >= LOAD_SAMPLE_NANOS) { // racy: two callers may both sample, which is harmless
                loadSampledAt = now;
                othersBusy = othersLoad.getAsDouble() > busyAbove;
            }
            return othersBusy;
        }

        /**
         * The machine's CPU load since the previous sample less this process's, from the JVM's operating system bean
         * (container-aware on Linux); -1 where the JVM does not tell.
         */
        private static double othersLoad() {
            if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
                double system = os.getCpuLoad();
                double process = os.getProcessCpuLoad();
                return system < 0 || process < 0 ? -1 : system - process;
            }
            return -1;
        }

        private static boolean isVirtual(Thread thread) {
            if (IS_VIRTUAL == null) {
                return false;
            }
            try {
                return (boolean) IS_VIRTUAL.invokeExact(thread);
            } catch (Throwable e) {
                return false;
            }
        }

        /** {@code Thread.isVirtual()} on Java 21 and later; {@code null} on 17. */
        private static MethodHandle isVirtualHandle() {
            try {
                return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
            } catch (ReflectiveOperationException e) {
                return null;
            }
        }
    }
}
