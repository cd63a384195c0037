package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.LockContext;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Boot web app with Actuator on a real port, locking with {@code @DistributedLock} against a real redis-server:
 * what {@code /actuator/locks}, {@code /actuator/health/lock} and {@code /actuator/metrics/redis.lock.*} show.
 */
@WithRedis
class LockActuatorTest {

    static RedisServerProcess server;
    static ConfigurableApplicationContext app;
    static OrderService orders;
    static String base;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startApp() {
        app = new SpringApplicationBuilder(App.class).properties(
                "server.port=0", "spring.main.banner-mode=off",
                "spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
                "management.endpoints.web.exposure.include=health,locks,metrics",
                "management.endpoint.health.show-details=always",
                "redis-lock.lease-time=9s", "redis-lock.wait-time=20s").run();
        orders = app.getBean(OrderService.class);
        orders.quote(0); // connects and loads the scripts, which a loaded machine may take seconds for
        base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    static void stopApp() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void theLocksEndpointShowsTheHeldLockAndItsWaiter() throws Exception {
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> orders.pay(42));
        try {
            showsTheHeldLockAndItsWaiter(holder);
        } finally {
            OrderService.leave.countDown();
        }
    }

    private void showsTheHeldLockAndItsWaiter(CompletableFuture<Void> holder) throws Exception {
        assertThat(OrderService.entered.await(20, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> orders.pay(42));
        RedisLockTemplate template = app.getBean(RedisLockTemplate.class);
        awaitTrue(() -> template.diagnostics().waiters().size() == 1, "the second call to wait");

        HttpResponse<String> response = get("/actuator/locks");
        System.out.println("GET /actuator/locks ->\n" + response.body());
        assertThat(response.statusCode()).isEqualTo(200);
        Map<?, ?> body = redisLockTemplate(response.body());
        assertThat(body.get("clientId")).isEqualTo(template.clientId());
        List<?> held = (List<?>) body.get("held");
        assertThat(held).hasSize(1);
        Map<?, ?> lock = (Map<?, ?>) held.get(0);
        assertThat(lock.get("key")).isEqualTo("order:42");
        assertThat(lock.get("name")).isEqualTo("OrderService.pay");
        assertThat(lock.get("type")).isEqualTo("exclusive");
        assertThat(((Number) lock.get("fencingToken")).longValue()).isEqualTo(OrderService.token.get());
        assertThat(lock.get("renewing")).isEqualTo(true);
        assertThat(((Number) lock.get("leaseLeftMs")).longValue()).isPositive().isLessThanOrEqualTo(9000);
        assertThat(lock.get("thread")).isEqualTo(OrderService.holderThread);
        assertThat((String) lock.get("heldSince")).isNotBlank();
        List<?> waiting = (List<?>) body.get("waiting");
        assertThat(waiting).hasSize(1);
        assertThat(((Map<?, ?>) waiting.get(0)).get("key")).isEqualTo("order:42");
        assertThat(((Map<?, ?>) waiting.get(0)).get("thread")).isNotEqualTo(OrderService.holderThread);

        OrderService.leave.countDown();
        holder.get(20, TimeUnit.SECONDS);
        waiter.get(20, TimeUnit.SECONDS);
        Map<?, ?> after = redisLockTemplate(get("/actuator/locks").body());
        assertThat((List<?>) after.get("held")).isEmpty();
        assertThat((List<?>) after.get("waiting")).isEmpty();
    }

    @Test
    void theLocksEndpointListsALockKeptPastItsMethodByHoldAtLeastUntilRedisLetsItGo() throws Exception {
        // the entry must be listed when the endpoint answered within the minimum hold; a loaded machine may answer later
        List<?> held = null;
        for (int attempt = 0; attempt < 5 && held == null; attempt++) {
            long start = System.nanoTime();
            orders.report(); // after the first attempt, waits for the previous attempt's minimum hold to end
            HttpResponse<String> response = get("/actuator/locks");
            if (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5)) {
                System.out.println("GET /actuator/locks after a holdAtLeast method returned ->\n" + response.body());
                held = (List<?>) redisLockTemplate(response.body()).get("held");
            }
        }
        assertThat(held).as("an answer within the 5s minimum hold in 5 attempts").isNotNull();
        assertThat(held).singleElement().satisfies(entry -> {
            Map<?, ?> lock = (Map<?, ?>) entry;
            assertThat(lock.get("key")).isEqualTo("report:daily");
            assertThat(lock.get("name")).isEqualTo("OrderService.report");
            assertThat((String) lock.get("state")).matches("held until \\d{4}-.*Z \\(holdAtLeast\\)");
            assertThat(lock.get("renewing")).isEqualTo(false);
            assertThat(((Number) lock.get("leaseLeftMs")).longValue()).isPositive().isLessThanOrEqualTo(5000);
        });
        awaitTrue(() -> app.getBean(RedisLockTemplate.class).diagnostics().heldLocks().isEmpty(),
                "the minimum hold to end");
        assertThat((List<?>) redisLockTemplate(get("/actuator/locks").body()).get("held")).isEmpty();
        RedisLockTemplate other = new RedisLockTemplate(app.getBean(org.springframework.data.redis.core.StringRedisTemplate.class));
        try {
            // the local view lets go a safety margin (1 % of the lease plus 2 ms) before Redis's key expires, so
            // another client may have to wait those few milliseconds
            assertThat(other.tryAcquire("report:daily", io.github.redislock.core.LockOptions.waitFor(Duration.ofSeconds(1))))
                    .as("Redis let it go within the safety margin of its no longer being listed").get()
                    .satisfies(io.github.redislock.core.LockHandle::release);
        } finally {
            other.close();
        }
    }

    @Test
    void theMetricsEndpointShowsTheAcquireAndHeldTimersUnderTheMethodsName() throws Exception {
        String acquired = "/actuator/metrics/redis.lock.acquire?tag=locks:redisLockTemplate&tag=name:OrderService.quote"
                + "&tag=outcome:acquired";
        double before = count(acquired);
        orders.quote(7);
        orders.quote(8);
        assertThat(count(acquired)).isEqualTo(before + 2);
        HttpResponse<String> held = get("/actuator/metrics/redis.lock.held?tag=name:OrderService.quote");
        System.out.println("GET /actuator/metrics/redis.lock.held ->\n" + held.body());
        assertThat(held.statusCode()).isEqualTo(200);
        assertThat(get("/actuator/metrics/redis.lock.active?tag=locks:redisLockTemplate").statusCode()).isEqualTo(200);
        Map<String, Object> acquire = JsonParserFactory.getJsonParser().parseMap(get("/actuator/metrics/redis.lock.acquire").body());
        assertThat(acquire.toString()).contains("outcome").contains("OrderService.quote");
    }

    @Test
    void theLockHealthTurnsDownWhenRenewalsFailForAThirdOfTheLeaseAndUpWhenTheyRecover() throws Exception {
        assertThat(get("/actuator/health/lock").statusCode()).isEqualTo(200);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> orders.hold(release));
        awaitTrue(() -> app.getBean(RedisLockTemplate.class).diagnostics().heldLockCount() == 1, "the lock to be held");
        long paused = System.nanoTime();
        server.pause(); // SIGSTOP: renewals go unanswered
        HttpResponse<String> down;
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(9);
            do {
                down = get("/actuator/health/lock");
            } while (down.statusCode() == 200 && System.nanoTime() < end);
            System.out.printf("lock health DOWN %d ms after Redis froze (lease 9 s): %s%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - paused), down.body());
        } finally {
            server.resume();
        }
        assertThat(down.statusCode()).isEqualTo(503);
        assertThat(down.body()).contains("\"status\":\"DOWN\"").contains("hold:1").contains("renewalOverdueMs");
        release.countDown();
        try {
            holder.get(20, TimeUnit.SECONDS);
        } catch (Exception lostWhileFrozen) {
            // the lease may have run out before Redis came back: the release then reports it lost
        }
        awaitTrue(() -> get("/actuator/health/lock").statusCode() == 200, "the lock health to be UP again");
    }

    @Test
    void theLocksEndpointListsTheOneBackendUnderItsBeanNameAndShowsItAlone() {
        Map<String, Object> body = JsonParserFactory.getJsonParser().parseMap(get("/actuator/locks").body());
        assertThat(body).containsOnlyKeys("backends");
        assertThat(((Map<?, ?>) body.get("backends")).keySet()).isEqualTo(java.util.Set.of("redisLockTemplate"));
        HttpResponse<String> one = get("/actuator/locks/redisLockTemplate");
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(JsonParserFactory.getJsonParser().parseMap(one.body())).containsKeys("clientId", "held", "waiting");
        assertThat(get("/actuator/locks/noSuchBean").statusCode()).isEqualTo(404);
    }

    /** The {@code redisLockTemplate} backend of a {@code /actuator/locks} answer. */
    private static Map<?, ?> redisLockTemplate(String body) {
        Map<?, ?> backends = (Map<?, ?>) JsonParserFactory.getJsonParser().parseMap(body).get("backends");
        return (Map<?, ?>) backends.get("redisLockTemplate");
    }

    private static double count(String path) {
        HttpResponse<String> response = get(path);
        if (response.statusCode() == 404) {
            return 0;
        }
        Map<String, Object> body = JsonParserFactory.getJsonParser().parseMap(response.body());
        for (Object measurement : (List<?>) body.get("measurements")) {
            Map<?, ?> m = (Map<?, ?>) measurement;
            if ("COUNT".equals(m.get("statistic"))) {
                return ((Number) m.get("value")).doubleValue();
            }
        }
        throw new AssertionError("no COUNT in " + response.body());
    }

    private static HttpResponse<String> get(String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new AssertionError("GET " + path, e);
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        OrderService orderService() {
            return new OrderService();
        }
    }

    static class OrderService {

        // static: the test calls the bean through its proxy, whose own fields are not the target's
        static final CountDownLatch entered = new CountDownLatch(1);
        static final CountDownLatch leave = new CountDownLatch(1);
        static final AtomicLong token = new AtomicLong();
        static volatile String holderThread;

        @DistributedLock(key = "'order:' + #id")
        public void pay(long id) {
            if (entered.getCount() > 0) {
                holderThread = Thread.currentThread().getName();
                token.set(LockContext.fencingToken());
                entered.countDown();
                await(leave);
            }
        }

        @DistributedLock(key = "'quote:' + #id")
        public void quote(long id) {
        }

        @DistributedLock(key = "'report:daily'", holdAtLeast = "5s")
        public void report() {
        }

        @DistributedLock(key = "'hold:1'")
        public void hold(CountDownLatch release) {
            await(release);
        }

        private static void await(CountDownLatch latch) {
            try {
                latch.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
