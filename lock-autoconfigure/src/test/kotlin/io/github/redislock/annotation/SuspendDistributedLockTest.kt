package io.github.redislock.annotation

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration
import io.github.redislock.core.LockHandle
import io.github.redislock.core.LockNotAcquiredException
import io.github.redislock.core.LockOptions
import io.github.redislock.core.RedisLockTemplate
import io.github.redislock.test.Intervals
import io.github.redislock.test.RedisServerProcess
import io.github.redislock.test.WithRedis
import java.time.Duration
import java.util.Collections
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.support.DefaultListableBeanFactory
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration
import org.springframework.boot.test.context.assertj.AssertableApplicationContext
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.data.redis.core.StringRedisTemplate

/**
 * `@DistributedLock` on Kotlin `suspend` functions and on functions returning a `Flow`, on a real redis-server: the
 * lock is held from the call (a flow: from its collection) until the coroutine completes, fails or is cancelled,
 * across its suspension points and whichever threads it resumes on.
 */
@WithRedis
class SuspendDistributedLockTest {

    lateinit var server: RedisServerProcess

    companion object {
        private val otherThreads = Executors.newFixedThreadPool(2) { Thread(it, "other-dispatcher").apply { isDaemon = true } }
        val otherDispatcher = otherThreads.asCoroutineDispatcher()

        @JvmStatic
        @AfterAll
        fun stopOtherThreads() {
            otherThreads.shutdownNow()
        }
    }

    private fun runner() = ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                AopAutoConfiguration::class.java, DataRedisAutoConfiguration::class.java,
                RedisLockAutoConfiguration::class.java
            )
        )
        .withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port())

    private fun run(test: (AssertableApplicationContext) -> Unit) {
        runner().withBean(SuspendJobs::class.java).run { context ->
            assertThat(context).hasNotFailed()
            test(context)
        }
    }

    data class Interval(val enter: Long, val exit: Long)

    @Test
    fun coroutinesOfTwoApplicationsResumingOnOtherThreadsNeverOverlapNorLoseAnUpdate() {
        server.command("SET", "suspend-counter", "0")
        val intervals = Collections.synchronizedList(ArrayList<Interval>())
        val calls = 30
        run { a ->
            run { b ->
                val first = a.getBean(SuspendJobs::class.java)
                val second = b.getBean(SuspendJobs::class.java)
                val redis = a.getBean(StringRedisTemplate::class.java)
                runBlocking(Dispatchers.Default) {
                    (0 until calls).map { i ->
                        async { (if (i % 2 == 0) first else second).increment(redis, intervals) }
                    }.awaitAll()
                }
                assertThat(redis.opsForValue().get("suspend-counter")).isEqualTo(calls.toString())
            }
        }
        assertThat(intervals).hasSize(calls)
        assertThat(Intervals.maxConcurrency(intervals, { it.enter }, { it.exit }))
            .`as`("critical sections in progress at once").isEqualTo(1)
    }

    @Test
    fun theLockIsHeldAcrossSuspensionsAndReleasedWhenTheCoroutineCompletesOnAnotherThread() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val other = otherClient(context)
            val work = CompletableDeferred<String>()
            runBlocking {
                val call = async(Dispatchers.Default) { jobs.waitFor(work) }
                awaitHeld(other, "pending")
                delay(50) // the coroutine is suspended meanwhile: the lock stays held
                assertThat(other.tryAcquire("pending", LockOptions.tryOnce())).isEmpty()
                Thread({ work.complete("done") }, "completer").start()
                assertThat(withTimeout(30_000) { call.await() }).isEqualTo("done")
            }
            assertThat(other.tryAcquire("pending", LockOptions.tryOnce())).get().satisfies({ it.release() })
        }
    }

    @Test
    fun aCoroutineThatEndsOnAnotherDispatcherReleasesTheLock() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val thread = runBlocking { withTimeout(30_000) { jobs.onAnotherDispatcher() } }
            assertThat(thread).startsWith("other-dispatcher") // with " @coroutine#N" when coroutine debugging is on
            assertThat(otherClient(context).tryAcquire("dispatched", LockOptions.tryOnce())).get()
                .satisfies({ it.release() })
        }
    }

    @Test
    fun aFailingCoroutineReleasesTheLockAndItsExceptionReachesTheCaller() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            assertThatThrownBy { runBlocking { withTimeout(30_000) { jobs.fail() } } }
                .isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
            assertThat(otherClient(context).tryAcquire("failing", LockOptions.tryOnce())).get()
                .satisfies({ it.release() })
        }
    }

    @Test
    fun aCancelledCoroutineReleasesTheLockAndTheNextCallerGetsItWellBeforeTheLeaseWouldEnd() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val other = otherClient(context)
            runBlocking {
                val started = CompletableDeferred<Unit>()
                val job = launch(Dispatchers.Default) { jobs.never(started) }
                withTimeout(30_000) { started.await() }
                assertThat(other.tryAcquire("never", LockOptions.tryOnce())).isEmpty()
                val start = System.nanoTime()
                job.cancelAndJoin()
                // the watchdog lease is 30s: within 10s only the release can have freed it
                other.acquire("never", LockOptions.waitFor(Duration.ofSeconds(10))).use { next ->
                    println("@DistributedLock suspend fun cancelled: the next caller waited "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms")
                    assertThat(next.isHeld).isTrue()
                }
            }
        }
    }

    @Test
    fun aCoroutineCancelledWhileWaitingForTheLockNeverRunsNorTakesItLater() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val other = otherClient(context)
            val held = other.acquire("never", LockOptions.tryOnce())
            runBlocking {
                val started = CompletableDeferred<Unit>()
                val job = launch(Dispatchers.Default, start = CoroutineStart.UNDISPATCHED) { jobs.never(started) }
                delay(200) // waiting for the lock
                job.cancelAndJoin()
                held.release()
                delay(200)
                assertThat(started.isCompleted).`as`("the method ran").isFalse()
            }
            // free again: a withdrawal of the cancelled waiter that reached Redis after the release leaves it the
            // release's turn (200 ms), so the other client may wait that long
            assertThat(other.tryAcquire("never", LockOptions.waitFor(Duration.ofSeconds(2)))).get().satisfies({ it.release() })
        }
    }

    @Test
    fun aCallThatCannotGetTheLockThrowsLockNotAcquired() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            otherClient(context).acquire("pending", LockOptions.tryOnce()).use {
                val work = CompletableDeferred("must not run")
                assertThatThrownBy { runBlocking { withTimeout(30_000) { jobs.waitFor(work) } } }
                    .isInstanceOf(LockNotAcquiredException::class.java).hasMessageContaining("'pending'")
            }
        }
    }

    @Test
    fun aSkippedCallReturnsNullAndNeverRuns() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            otherClient(context).acquire("skip", LockOptions.tryOnce()).use {
                assertThat(runBlocking { jobs.skipping() }).isNull()
                assertThat(jobs.skippedRuns).isZero()
            }
            assertThat(runBlocking { jobs.skipping() }).isEqualTo("ran")
            assertThat(jobs.skippedRuns).isEqualTo(1)
        }
    }

    @Test
    fun aSuspendFunctionReturningAFlowHoldsTheLockWhileItIsCollectedAndSeesItsFencingToken() {
        run { context -> flowHoldsTheLock(context) { jobs, values -> jobs.suspendValues(values, 0) } }
    }

    @Test
    fun aFunctionReturningAFlowHoldsTheLockWhileItIsCollectedAndSeesItsFencingToken() {
        run { context -> flowHoldsTheLock(context) { jobs, values -> jobs.values(values, 0) } }
    }

    private fun flowHoldsTheLock(context: AssertableApplicationContext, flow: suspend (SuspendJobs, Channel<Long>) -> Flow<Long>) {
        val jobs = context.getBean(SuspendJobs::class.java)
        val other = otherClient(context)
        val values = Channel<Long>(Channel.UNLIMITED)
        runBlocking {
            val seen = Collections.synchronizedList(ArrayList<Long>())
            val values1 = flow(jobs, values)
            assertThat(other.tryAcquire("flow", LockOptions.tryOnce())).`as`("not held before collection").get()
                .satisfies({ it.release() })
            val collecting = launch(Dispatchers.Default) { values1.collect { seen.add(it) } }
            awaitHeld(other, "flow")
            values.send(7L)
            assertThat(other.tryAcquire("flow", LockOptions.tryOnce())).isEmpty()
            values.close()
            withTimeout(30_000) { collecting.join() }
            assertThat(seen).hasSize(2).contains(7L)
            assertThat(seen[0]).`as`("the @FencingToken the function received").isPositive()
        }
        assertThat(other.tryAcquire("flow", LockOptions.tryOnce())).get().satisfies({ it.release() })
    }

    @Test
    fun aFlowWhoseCollectorStopsEarlyReleasesTheLock() {
        run { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val values = Channel<Long>(Channel.UNLIMITED)
            val first = runBlocking { withTimeout(30_000) { jobs.values(values, 0).first() } }
            assertThat(first).isPositive()
            otherClient(context).acquire("flow", LockOptions.waitFor(Duration.ofSeconds(10))).use { next ->
                assertThat(next.isHeld).isTrue()
            }
        }
    }

    @Test
    fun skippingASuspendFunctionWithANonNullableResultIsRefusedAtStartUp() {
        runner().withBean(SkipsNonNullable::class.java).run { context ->
            assertThat(context).failure.hasMessageContaining(
                "SkipsNonNullable.run(Continuation): onFailure = SKIP makes a skipped call return null, but this suspend "
                        + "function returns the non-nullable String; declare it nullable (String?) or use onFailure = THROW"
            )
        }
    }

    @Test
    fun aSuspendFunctionOrFlowWithoutKotlinxCoroutinesReactorOrAFlowSubtypeIsRefused() {
        assertThat(AsyncLockedCalls.kotlinRefusal(true, Any::class.java, false, true))
            .contains("is a Kotlin suspend function").contains("org.jetbrains.kotlinx:kotlinx-coroutines-reactor")
        assertThat(AsyncLockedCalls.kotlinRefusal(true, Any::class.java, true, false))
            .contains("org.jetbrains.kotlin:kotlin-reflect")
        assertThat(AsyncLockedCalls.kotlinRefusal(false, Flow::class.java, false, true))
            .contains("returns kotlinx.coroutines.flow.Flow").contains("org.jetbrains.kotlinx:kotlinx-coroutines-reactor")
        assertThat(AsyncLockedCalls.kotlinRefusal(false, StateFlow::class.java, true, true))
            .contains("returns kotlinx.coroutines.flow.StateFlow, a Flow the lock cannot hand back; declare kotlinx.coroutines.flow.Flow")
        assertThat(AsyncLockedCalls.kotlinRefusal(true, Any::class.java, true, true)).isNull()
        assertThat(AsyncLockedCalls.kotlinRefusal(false, Flow::class.java, true, true)).isNull()
        assertThat(AsyncLockedCalls.kotlinRefusal(false, String::class.java, false, false)).isNull()
    }

    /** Another client of the same Redis: another owner, closed with the context. */
    private fun otherClient(context: AssertableApplicationContext): RedisLockTemplate {
        val other = RedisLockTemplate(context.getBean(StringRedisTemplate::class.java))
        (context.beanFactory as DefaultListableBeanFactory).registerDisposableBean("otherClient" + System.nanoTime()) { other.close() }
        return other
    }

    private fun awaitHeld(other: RedisLockTemplate, key: String) {
        val end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        while (true) {
            val handle = other.tryAcquire(key, LockOptions.tryOnce())
            if (handle.isEmpty) {
                return
            }
            handle.get().release()
            assertThat(System.nanoTime()).`as`("%s held within 30s", key).isLessThan(end)
            Thread.sleep(1)
        }
    }

    open class SuspendJobs {

        @Volatile
        open var skippedRuns = 0 // open: read through the proxy

        @DistributedLock(key = ["'suspend-counter'"], waitTime = "30s")
        open suspend fun increment(redis: StringRedisTemplate, intervals: MutableList<Interval>) {
            val enter = System.nanoTime()
            val value = redis.opsForValue().get("suspend-counter")!!.toLong()
            delay(2) // a suspension point: the lock must outlive it
            withContext(otherDispatcher) { // and resuming on another thread
                redis.opsForValue().set("suspend-counter", (value + 1).toString())
            }
            intervals.add(Interval(enter, System.nanoTime()))
        }

        @DistributedLock(key = ["'pending'"], waitTime = "1s")
        open suspend fun waitFor(work: CompletableDeferred<String>): String = work.await()

        @DistributedLock(key = ["'dispatched'"])
        open suspend fun onAnotherDispatcher(): String = withContext(otherDispatcher) {
            delay(5)
            Thread.currentThread().name
        }

        @DistributedLock(key = ["'failing'"])
        open suspend fun fail(): String {
            delay(1)
            throw IllegalStateException("boom")
        }

        @DistributedLock(key = ["'never'"], waitTime = "30s")
        open suspend fun never(started: CompletableDeferred<Unit>): String {
            started.complete(Unit)
            awaitCancellation()
        }

        @DistributedLock(key = ["'skip'"], waitTime = "0s", onFailure = OnFailure.SKIP)
        open suspend fun skipping(): String? {
            delay(1)
            skippedRuns++
            return "ran"
        }

        @DistributedLock(key = ["'flow'"])
        open suspend fun suspendValues(values: Channel<Long>, @FencingToken token: Long): Flow<Long> {
            delay(1)
            return flow {
                emit(token)
                for (value in values) {
                    emit(value)
                }
            }
        }

        @DistributedLock(key = ["'flow'"])
        open fun values(values: Channel<Long>, @FencingToken token: Long): Flow<Long> = flow {
            emit(token)
            for (value in values) {
                emit(value)
            }
        }
    }

    open class SkipsNonNullable {

        @DistributedLock(key = ["'k'"], onFailure = OnFailure.SKIP)
        open suspend fun run(): String = "ran"
    }
}
