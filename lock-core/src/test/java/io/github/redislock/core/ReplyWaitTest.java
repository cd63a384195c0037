package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The spin-then-park heuristic of {@link LettuceScriptCalls.ReplyWait} (pure logic: replies are Lettuce commands
 * completed by a test thread, no Redis).
 */
class ReplyWaitTest {

    private final ScheduledExecutorService replier = Executors.newSingleThreadScheduledExecutor();
    /** A long spin, so "quick" and "late" do not depend on how busy the machine running the test is. */
    private final LettuceScriptCalls.ReplyWait wait = new LettuceScriptCalls.ReplyWait(TimeUnit.MILLISECONDS.toNanos(200), 2,
            () -> 0); // an idle machine apart from this JVM, whatever the machine running the test is doing
    private final AtomicInteger loadSamples = new AtomicInteger();
    private static final long LATE = TimeUnit.MILLISECONDS.toNanos(300);
    private static final long QUICK = TimeUnit.MICROSECONDS.toNanos(5);

    @AfterEach
    void stop() {
        replier.shutdownNow();
    }

    @Test
    void repliesLaterThanTheSpinStopTheSpinningUntilAProbeSeesAQuickReplyAgain() {
        int start = wait.credit();
        int slowCalls = 0;
        while (wait.credit() > 0) {
            assertThat(call(LATE, true)).isEqualTo(7L);
            slowCalls++;
        }
        assertThat(slowCalls).as("each run-out spin takes two credits").isEqualTo((start + 1) / 2);
        // parked calls change nothing; the probe (every PROBE_EVERY-th parked call) spins and sees a quick reply
        for (int i = 1; i < LettuceScriptCalls.ReplyWait.PROBE_EVERY; i++) {
            assertThat(call(QUICK, true)).isEqualTo(7L);
            assertThat(wait.credit()).isZero();
        }
        assertThat(call(QUICK, true)).isEqualTo(7L);
        assertThat(wait.credit()).isEqualTo(1);
    }

    @Test
    void aCallThatIsNotAloneOnTheConnectionParksAtOnce() {
        int start = wait.credit();
        for (int i = 0; i < 3; i++) {
            assertThat(call(LATE, false)).isEqualTo(7L);
        }
        assertThat(wait.credit()).as("no spin ran, so none ran out").isEqualTo(start);
    }

    @Test
    void onOneProcessorACallParksAtOnce() {
        LettuceScriptCalls.ReplyWait oneProcessor = new LettuceScriptCalls.ReplyWait(TimeUnit.MILLISECONDS.toNanos(200), 1,
                () -> 0);
        int start = oneProcessor.credit();
        for (int i = 0; i < 3; i++) {
            assertThat(call(oneProcessor, LATE, true)).isEqualTo(7L);
        }
        assertThat(oneProcessor.credit()).as("no spin ran, so none ran out").isEqualTo(start);
    }

    @Test
    void whenTheOtherProcessesLeaveThisJvmNoProcessorACallParksAtOnce() throws Exception {
        double[] othersLoad = {0.6}; // of 2 processors: more than the one the others may use
        LettuceScriptCalls.ReplyWait busy = new LettuceScriptCalls.ReplyWait(TimeUnit.MILLISECONDS.toNanos(200), 2,
                () -> othersLoad[0]);
        int start = busy.credit();
        for (int i = 0; i < 3; i++) {
            assertThat(call(busy, LATE, true)).isEqualTo(7L);
        }
        assertThat(busy.credit()).as("no spin ran, so none ran out").isEqualTo(start);
        othersLoad[0] = 0.4;
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(LettuceScriptCalls.ReplyWait.LOAD_SAMPLE_NANOS) + 10);
        assertThat(call(busy, LATE, true)).isEqualTo(7L);
        assertThat(busy.credit()).as("a processor to spare again: the spin ran, and ran out").isEqualTo(start - 2);
    }

    @Test
    void theLoadIsSampledAtMostEveryFiftyMilliseconds() {
        LettuceScriptCalls.ReplyWait sampled = new LettuceScriptCalls.ReplyWait(TimeUnit.MILLISECONDS.toNanos(200), 2, () -> {
            loadSamples.incrementAndGet();
            return 0;
        });
        long start = System.nanoTime();
        for (int i = 0; i < 5; i++) {
            call(sampled, QUICK, true);
        }
        long tookNanos = System.nanoTime() - start;
        assertThat(loadSamples.get()).isBetween(1, 1 + (int) (tookNanos / LettuceScriptCalls.ReplyWait.LOAD_SAMPLE_NANOS));
    }

    @Test
    void quickRepliesKeepTheSpinning() {
        call(LATE, true);
        call(LATE, true);
        int afterTwoRunOut = wait.credit();
        for (int i = 0; i < 3; i++) {
            call(QUICK, true);
        }
        assertThat(wait.credit()).isEqualTo(afterTwoRunOut + 3);
    }

    @Test
    void whileParkedCallsGetTheirRepliesSoonerThanSpinningOnesLoneCallsPark() {
        call(LATE, true); // spun and ran out: spinning looks slow
        for (int i = 2; i < LettuceScriptCalls.ReplyWait.PROBE_EVERY; i++) {
            call(QUICK, true); // spun: no parked call to compare with yet
        }
        assertThat(wait.spinPays()).isTrue();
        call(QUICK, true); // the PROBE_EVERY-th parks, and its reply comes sooner than the spun calls' did on average
        assertThat(wait.spinPays()).isFalse();

        int credit = wait.credit();
        call(LATE, true);
        assertThat(wait.credit()).as("parked: no spin ran out").isEqualTo(credit);
    }

    @Test
    void spinningPaysOnlyWhenItSavesAFifthOfAParkedWait() {
        assertThat(LettuceScriptCalls.ReplyWait.pays(50_000, 100_000)).isTrue();
        assertThat(LettuceScriptCalls.ReplyWait.pays(80_000, 100_000)).isTrue();
        assertThat(LettuceScriptCalls.ReplyWait.pays(81_000, 100_000)).as("19 % sooner").isFalse();
        assertThat(LettuceScriptCalls.ReplyWait.pays(100_000, 100_000)).isFalse();
    }

    @Test
    void callsInFlightAreCounted() {
        assertThat(wait.sending()).isTrue();
        assertThat(wait.sending()).isFalse();
        wait.done();
        wait.done();
        assertThat(wait.sending()).isTrue();
        wait.done();
    }

    /** A reply that the "event loop" completes {@code afterNanos} from now, awaited as a lock call would. */
    private Long call(long afterNanos, boolean alone) {
        return call(wait, afterNanos, alone);
    }

    private Long call(LettuceScriptCalls.ReplyWait wait, long afterNanos, boolean alone) {
        AsyncCommand<byte[], byte[], Long> reply = new AsyncCommand<>(
                new Command<>(CommandType.EVALSHA, new IntegerOutput<>(ByteArrayCodec.INSTANCE)));
        replier.schedule(() -> {
            reply.getOutput().set(7L);
            reply.complete();
        }, afterNanos, TimeUnit.NANOSECONDS);
        return wait.await(reply, 5_000, alone);
    }
}
