package io.github.redislock.annotation;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Optional;

import org.springframework.core.annotation.AliasFor;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Beans with every form of {@link DistributedLock} the integration tests call. */
final class LockedServices {

    private LockedServices() {
    }

    record Order(long id, String customer) {
        public long getId() {
            return id;
        }
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @DistributedLock(name = "order-lock", key = "#orderId", waitTime = "1s")
    @interface OrderLock {
    }

    /** A user's own annotation that passes {@code key} through to {@link DistributedLock}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @DistributedLock(name = "customer-lock", waitTime = "1s")
    @interface CustomerLock {
        @AliasFor(annotation = DistributedLock.class)
        String[] key() default {};
    }

    static class Orders {

        private final StringRedisTemplate redis;

        Orders(StringRedisTemplate redis) {
            this.redis = redis;
        }

        @DistributedLock(key = "'order:' + #orderId", waitTime = "5s")
        public long byName(long orderId) {
            return LockContext.fencingToken("order:" + orderId);
        }

        @DistributedLock(key = "'order:' + #order.id")
        public long byProperty(Order order) {
            return LockContext.fencingToken("order:" + order.id());
        }

        @DistributedLock(key = "#p0 + '/' + #a1")
        public long byPosition(String first, String second) {
            return LockContext.fencingToken(first + "/" + second);
        }

        @DistributedLock(key = "#root.methodName + ':' + #root.className + ':' + #root.args.length")
        public long byRoot() {
            return LockContext.fencingToken("byRoot:Orders:0");
        }

        @DistributedLock(name = "inventory", key = {"#second", "#first"}, waitTime = "500ms")
        public List<Long> twoKeys(String first, String second) {
            return List.of(LockContext.fencingToken("inventory:" + first), LockContext.fencingToken("inventory:" + second));
        }

        @DistributedLock(key = "#id", waitTime = "${test.lock-wait}")
        public void waitFromProperty(String id) {
        }

        @DistributedLock(key = "#id", leaseTime = "5s")
        public int fixedLease(String id, io.github.redislock.core.RedisLockTemplate template) {
            return template.diagnostics().scheduledRenewalCount();
        }

        @DistributedLock(key = "#id", waitTime = "200ms")
        public void throwing(String id) {
        }

        @DistributedLock(key = "#id", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Optional<String> skipOptional(String id) {
            return Optional.of("ran");
        }

        @DistributedLock(key = "#id", waitTime = "0s", onFailure = OnFailure.SKIP)
        public List<String> skipList(String id) {
            return List.of("ran");
        }

        @DistributedLock(key = "#id", waitTime = "0s", onFailure = OnFailure.SKIP)
        public String skipString(String id) {
            return "ran";
        }

        @DistributedLock(key = "#id", waitTime = "0s", onFailure = OnFailure.SKIP)
        public void skipVoid(String id) {
            redis.opsForValue().increment("skip-void-ran");
        }

        @DistributedLock(key = "#id")
        public long[] fencing(String id, @FencingToken long token) {
            return new long[] {token, LockContext.fencingToken()};
        }

        @DistributedLock(key = "#id")
        public void nullableKey(String id) {
        }

        @OrderLock
        public long metaAnnotated(long orderId) {
            return LockContext.fencingToken("order-lock:" + orderId);
        }

        @CustomerLock(key = "#customer")
        public java.util.Set<String> aliased(String customer) {
            return LockContext.keys();
        }

        @DistributedLock
        public long perMethod() {
            return LockContext.fencingToken(Orders.class.getName() + ".perMethod");
        }

        @DistributedLock(key = "'counter'", waitTime = "30s")
        public void incrementCounter() throws InterruptedException {
            long value = Long.parseLong(redis.opsForValue().get("counter"));
            Thread.sleep(1);
            redis.opsForValue().set("counter", Long.toString(value + 1));
        }

        /** Locks by the array's content: a caller passes its own, equal array each time. */
        @DistributedLock(key = "#ids", waitTime = "30s")
        public java.util.Set<String> incrementCounterFor(long[] ids) throws InterruptedException {
            long value = Long.parseLong(redis.opsForValue().get("counter"));
            Thread.sleep(2);
            redis.opsForValue().set("counter", Long.toString(value + 1));
            return LockContext.keys();
        }

        @DistributedLock(key = "#id")
        public long nested(String id, Orders self) {
            return self.byName(7); // through the proxy: a second, inner lock
        }
    }

    @DistributedLock(name = "class-level")
    static class ClassLevel {

        public long first() {
            return LockContext.fencingToken("class-level");
        }

        public long second() {
            return LockContext.fencingToken("class-level");
        }
    }
}
