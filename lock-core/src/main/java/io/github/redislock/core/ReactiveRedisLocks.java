package io.github.redislock.core;

import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.function.Supplier;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link RedisLockTemplate#executeAsync} for Reactor: the lock is taken when the {@code Mono}/{@code Flux} is
 * subscribed to and held until it completes, fails or is cancelled; each subscription takes it anew. Waiting for the
 * lock and holding it happen on a holder thread of {@link RedisLockTemplate#asyncExecutor()}, never on the
 * subscriber's thread (an event loop need not be {@code boundedElastic} for it), and the publisher is subscribed to
 * from that thread once the lock is held. Needs Reactor on the classpath; the template does not.
 */
public final class ReactiveRedisLocks {

    private final RedisLockTemplate template;

    public ReactiveRedisLocks(RedisLockTemplate template) {
        this.template = Objects.requireNonNull(template, "template");
    }

    /**
     * Holds {@code key}'s exclusive lock from subscription until the {@code Mono} {@code action} gives ends.
     * Fails with {@link LockNotAcquiredException} when the lock could not be had within the options' wait time,
     * and with {@link LockLostException} when it was lost before the release.
     */
    public <T> Mono<T> mono(String key, LockOptions options, Supplier<? extends Mono<T>> action) {
        Objects.requireNonNull(action, "action");
        return mono(() -> start(key, options, action::get));
    }

    /** Like {@link #mono}, for a publisher of many values: the lock is held until it completes, fails or is cancelled. */
    public <T> Flux<T> flux(String key, LockOptions options, Supplier<? extends Publisher<T>> action) {
        Objects.requireNonNull(action, "action");
        return flux(() -> start(key, options, action::get));
    }

    private <P> AsyncHold<P> start(String key, LockOptions options, Supplier<P> action) {
        RedisLockTemplate.validateKey(key);
        Objects.requireNonNull(options, "options");
        return AsyncHold.start(template.asyncExecutor(), hold -> {
            try (LockHandle handle = template.acquire(key, options)) {
                hold.hold(action::get);
            }
            return null;
        });
    }

    /**
     * A {@code Mono} that starts a hold per subscription and subscribes to the publisher it started, ending the hold
     * when that completes, fails or is cancelled; a hold that started nothing ({@code null}) gives an empty Mono.
     */
    public static <T> Mono<T> mono(Supplier<AsyncHold<? extends Publisher<T>>> start) {
        return Mono.usingWhen(started(start), held -> held.publisher == null ? Mono.<T>empty() : Mono.from(held.publisher),
                held -> Mono.fromFuture(held.hold.end(null)),
                (held, failure) -> endFailed(held, failure),
                held -> Mono.fromFuture(held.hold.cancel()).onErrorResume(CancellationException.class, e -> Mono.empty()));
    }

    /** Like {@link #mono(Supplier)}, for many values. */
    public static <T> Flux<T> flux(Supplier<AsyncHold<? extends Publisher<T>>> start) {
        return Flux.usingWhen(started(start), held -> held.publisher == null ? Flux.<T>empty() : Flux.from(held.publisher),
                held -> Mono.fromFuture(held.hold.end(null)),
                (held, failure) -> endFailed(held, failure),
                held -> Mono.fromFuture(held.hold.cancel()).onErrorResume(CancellationException.class, e -> Mono.empty()));
    }

    /** The release after a failure: the failure itself reaches the subscriber anyway, a release failure is added to it. */
    private static Mono<Void> endFailed(Held<?> held, Throwable failure) {
        return Mono.fromFuture(held.hold.end(failure)).onErrorResume(e -> AsyncHold.unwrap(e) == failure, e -> Mono.empty());
    }

    private record Held<T>(AsyncHold<? extends Publisher<T>> hold, Publisher<T> publisher) {
    }

    /**
     * Emits once the lock is held and the publisher started; a cancellation before that stops the wait, or releases
     * the lock if it was just acquired.
     */
    private static <T> Mono<Held<T>> started(Supplier<AsyncHold<? extends Publisher<T>>> start) {
        return Mono.create(sink -> {
            AsyncHold<? extends Publisher<T>> hold = start.get();
            sink.onCancel(() -> {
                hold.cancel();
            });
            hold.whenStarted((publisher, failure) -> {
                if (failure != null) {
                    sink.error(AsyncHold.unwrap(failure));
                } else {
                    sink.success(new Held<>(hold, publisher));
                }
            });
        });
    }
}
