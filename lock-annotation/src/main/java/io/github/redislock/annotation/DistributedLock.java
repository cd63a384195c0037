package io.github.redislock.annotation;

import io.github.redislock.core.LockType;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method while holding a distributed lock on Redis: acquire, renew (watchdog), run, release.
 * <p>
 * On a class, it applies to every public method. It also works as a meta-annotation: annotate your
 * own annotation ({@code @OrderLock}) with it.
 *
 * <h2>Keys</h2>
 * {@link #key()} is SpEL over the method's arguments, evaluated for each call:
 * <ul>
 * <li>{@code "#orderId"} or {@code "'order:' + #orderId"}: an argument by name (compile with {@code -parameters},
 * as Spring Boot's build plugins do);</li>
 * <li>{@code "#p0"}, {@code "#a0"}: an argument by position;</li>
 * <li>{@code "#order.id"}, {@code "#order.customer().id()"}: properties and methods of an argument;</li>
 * <li>{@code "#root.methodName"}, {@code "#root.className"} (simple name), {@code "#root.args[0]"},
 * {@code "#root.targetClass"}: the call itself;</li>
 * <li>{@code "@tenants.current()"}: a bean, only with {@code redis-lock.allow-bean-references=true}.</li>
 * </ul>
 * Arrays, collections, maps and {@code Optional} lock by their content ({@code "#ids"} on
 * {@code long[] {1, 2, 3}} locks {@code [1, 2, 3]}); any other value by its own {@code toString()},
 * which its class must override (records, enums, strings and numbers do).
 * Type references ({@code T(...)}), constructors ({@code new ...}), assignment ({@code =}),
 * {@code ++}/{@code --}, {@code #root.target} and properties of a {@code Class} are refused. Several keys lock
 * all or nothing, in sorted order, so two callers never deadlock. {@link #name()} is a static
 * prefix joined to each key with {@code ':'}; with neither key nor name the lock is per method.
 *
 * Keys are checked at start-up (they must parse, with none of the refused forms, and a bare
 * parameter must not be of a final class without its own {@code toString()}) and at each call (a
 * key evaluating to {@code null} or blank, or to a value without its own {@code toString()}, throws
 * {@link IllegalArgumentException} naming the method and the expression).
 *
 * <h2>Durations</h2>
 * {@code "2s"}, {@code "500ms"}, {@code "1m"}, {@code "PT2S"}, or a placeholder {@code "${orders.lock-wait}"}.
 *
 * <h2>Transactions, fencing</h2>
 * The advisor runs outside {@code @Transactional}, so the lock is released after the commit or
 * rollback; when the method runs inside an already running transaction, the release waits for that
 * transaction to complete. The method reads its fencing token with {@link LockContext#fencingToken()}
 * or through a parameter annotated {@link FencingToken}.
 */
@Target({ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface DistributedLock {

    /** SpEL expression(s) giving the lock key; several lock all or nothing. */
    String[] key() default {};

    /**
     * A static prefix joined before each key with {@code ':'}; the whole key when {@link #key()} is empty. Also the
     * {@code name} tag of the lock's metrics and the name of its observation; without it they use the method
     * ({@code OrderService.pay}), never the key.
     */
    String name() default "";

    /**
     * The kind of lock: {@link LockType#EXCLUSIVE}, {@link LockType#FAIR} (one key), {@link LockType#READ},
     * {@link LockType#WRITE}, or {@link LockType#SEMAPHORE} (one key, with {@link #permits()}).
     */
    LockType type() default LockType.EXCLUSIVE;

    /** How long to wait for the lock: {@code "0s"} tries once; {@code ""} uses {@code redis-lock.wait-time}. */
    String waitTime() default "";

    /** A fixed lease that is never renewed; {@code ""} lets the watchdog renew the lock while the method runs. */
    String leaseTime() default "";

    /**
     * For scheduled jobs (ShedLock's {@code lockAtLeastFor}): the lock stays held until at least this long after it
     * was acquired. A method that ends sooner does not delete the lock but leaves it to expire then, so another
     * instance whose tick fires a little late (its clock behind, or a busy scheduler) finds it held and skips.
     * {@code ""} (the default): released when the method ends. Not longer than a {@link #leaseTime()}; exclusive
     * locks only. Same forms as the other durations: {@code "5s"}, {@code "${jobs.report.hold}"}.
     */
    String holdAtLeast() default "";

    /** What to do when the lock is not acquired within the wait time. */
    OnFailure onFailure() default OnFailure.THROW;

    /**
     * {@code 0} (the default): a lock. {@code 1} or more: a semaphore on the key instead, admitting that many calls
     * at once across the application's instances, one permit per call (see
     * {@code RedisLockTemplate.semaphore(key, permits)}: leased and watchdog-renewed like a lock, fenced, reentrant
     * per thread; the limit is the one stored in Redis, which {@code setPermits} changes at run time). Needs a
     * single key and the default {@code type} or {@code SEMAPHORE}.
     */
    int permits() default 0;

    /**
     * The bean name of the {@code LockOperations} to lock with, as {@code @Cacheable(cacheManager = "...")} names its
     * cache manager: {@code ""} (the default) is the application's only {@code LockOperations} bean, or its
     * {@code @Primary} one. With the Spring Boot starter that is {@code "redisLockTemplate"} (the application's Redis,
     * {@code spring.data.redis.*}); setting {@code redis-lock.redlock.nodes} adds {@code "redlockTemplate"}, which
     * locks over those independent masters (Redlock) and is used only where a method names it:
     * {@code @DistributedLock(key = "'payout:' + #id", locks = "redlockTemplate")}.
     * <p>
     * Resolved once per method at start-up: a name that is no {@code LockOperations} bean stops the application,
     * naming the method and listing the beans there are; so does a {@link #type()} of {@code FAIR}, {@code READ},
     * {@code WRITE} or {@code SEMAPHORE} ({@link #permits()}) on a backend that is not a {@code RedisLockTemplate}:
     * fair, read/write locks and semaphores are what one Redis does, not a quorum of independent masters.
     */
    String locks() default "";
}
