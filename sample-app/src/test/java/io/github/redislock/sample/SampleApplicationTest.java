package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.redislock.testing.TestRedisServer;
import io.github.redislock.testing.WithRedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/** Boots two instances of the sample app against a test Redis and calls their endpoints. */
@WithRedisServer
class SampleApplicationTest {

    static TestRedisServer redis;
    static ConfigurableApplicationContext first;
    static ConfigurableApplicationContext second;
    static final HttpClient http = HttpClient.newHttpClient();
    static final JsonMapper json = JsonMapper.builder().build();

    @BeforeAll
    static void start() {
        first = boot("instance-a");
        second = boot("instance-b");
    }

    @AfterAll
    static void stop() {
        first.close();
        second.close();
    }

    static ConfigurableApplicationContext boot(String instanceId) {
        return bootWith("--sample.instance-id=" + instanceId);
    }

    static ConfigurableApplicationContext bootWith(String... extraArgs) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "--server.port=0",
                "--spring.data.redis.port=" + redis.port(),
                "--sample.report-job.cron=* * * * * *",
                "--sample.report-job.work-millis=400",
                "--sample.report-job.hold-at-least=800ms"));
        for (String extra : extraArgs) { // an extra argument replaces the default for its property
            args.removeIf(arg -> arg.startsWith(extra.substring(0, extra.indexOf('=') + 1)));
            args.add(extra);
        }
        return new SpringApplicationBuilder(SampleApplication.class).run(args.toArray(String[]::new));
    }

    @Test
    void anInstanceWithoutAConfiguredIdRecordsItsJobRunsUnderTheIdItsEndpointShows() throws Exception {
        try (ConfigurableApplicationContext unnamed = bootWith()) {
            String shown = get(unnamed, "/jobs/report/runs").get("thisInstance").toString();
            assertThat(shown).isNotBlank();
            ReportJob job = unnamed.getBean(ReportJob.class);
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            boolean recorded = false;
            while (!recorded && System.nanoTime() < end) {
                job.run(); // skips while another instance holds the job's lock
                recorded = job.recentRuns().stream().anyMatch(run -> run.startsWith(shown + " at "));
            }
            assertThat(recorded).as("a run recorded under the id the endpoint shows (" + shown + ")").isTrue();
        }
    }

    @Test
    void anInstanceClosedMidJobLetsTheJobEndAndReleasesItsLock() throws Exception {
        // a key prefix of its own, so that the two running instances' jobs do not take this instance's lock
        String lockKey = "closing-test:{sample:report-job}";
        ConfigurableApplicationContext closing = bootWith("--sample.instance-id=instance-closing",
                "--redis-lock.key-prefix=closing-test", "--sample.report-job.work-millis=1500",
                "--sample.report-job.hold-at-least=100ms");
        try {
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (Long.parseLong(redis.command("PTTL", lockKey)) < 0 && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertThat(Long.parseLong(redis.command("PTTL", lockKey))).as("the job holds its lock").isPositive();
        } finally {
            closing.close();
        }
        // the task scheduler stops before the template (its lifecycle phase is higher) and waits for the running job,
        // which released the lock: at most holdAtLeast (100 ms) is left, not the watchdog's 30 s lease
        assertThat(Long.parseLong(redis.command("PTTL", lockKey))).as("lock's time to live after close, ms")
                .isLessThanOrEqualTo(100);
    }

    @Test
    void theLockedFlashSaleNeverOversells() throws Exception {
        Map<?, ?> result = post(first, "/flash-sale/phone/rush?stock=10&buyers=40&locked=true");
        assertThat(result.get("unitsSold")).isEqualTo(10);
        assertThat(result.get("oversold")).isEqualTo(0);
        assertThat(result.get("purchasesConfirmed")).isEqualTo(10);
    }

    @Test
    void theUnlockedFlashSaleShowsTheOversell() throws Exception {
        Map<?, ?> result = post(first, "/flash-sale/tablet/rush?stock=10&buyers=40&locked=false");
        assertThat((Integer) result.get("oversold")).isPositive();
    }

    @Test
    void twoInstancesSellingTheSameItemNeverOversell() throws Exception {
        post(first, "/flash-sale/watch/restock?stock=20");
        Thread[] buyers = new Thread[30];
        for (int i = 0; i < buyers.length; i++) {
            ConfigurableApplicationContext instance = i % 2 == 0 ? first : second;
            buyers[i] = new Thread(() -> {
                try {
                    post(instance, "/flash-sale/watch/buy?locked=true");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            buyers[i].start();
        }
        for (Thread buyer : buyers) {
            buyer.join();
        }
        Map<?, ?> stock = get(second, "/flash-sale/watch");
        assertThat(stock.get("sold")).isEqualTo(20);
        assertThat(stock.get("stock")).isEqualTo(0);
    }

    @Test
    void aFencedLedgerRefusesTheStalledHoldersWrite() throws Exception {
        Map<?, ?> deposit = post(first, "/ledger/alice/deposit?amount=100");
        assertThat(deposit.get("accepted")).isEqualTo(true);
        assertThat(((Number) deposit.get("fencingToken")).longValue()).isPositive();

        Map<?, ?> demo = post(second, "/ledger/alice/stale-write-demo");
        assertThat(demo.get("staleHolderStillHeldLock")).isEqualTo(false);
        assertThat(demo.get("staleWriteAccepted")).isEqualTo(false);
        Map<?, ?> newer = (Map<?, ?>) demo.get("newerWrite");
        assertThat(newer.get("accepted")).isEqualTo(true);
        assertThat(((Number) newer.get("fencingToken")).longValue()).isGreaterThan(((Number) demo.get("staleToken")).longValue());
        assertThat(((Number) demo.get("balance")).longValue()).isEqualTo(110);
        assertThat(demo.get("staleRelease").toString()).contains("was lost before it was released");
    }

    @Test
    void theScheduledJobRunsOnExactlyOneInstancePerTick() throws Exception {
        Thread.sleep(4500);
        List<String> runs = ((List<?>) get(first, "/jobs/report/runs").get("recentRuns")).stream()
                .map(Object::toString).toList();
        assertThat(runs).hasSizeGreaterThanOrEqualTo(3);
        Map<Instant, List<String>> byTick = runs.stream().collect(Collectors.groupingBy(
                run -> Instant.parse(run.substring(run.indexOf(" at ") + 4)).truncatedTo(ChronoUnit.SECONDS)));
        assertThat(byTick.values()).allSatisfy(tick -> assertThat(tick).hasSize(1));
    }

    @Test
    void theActuatorShowsTheLocksTheirHealthAndTheirMetrics() throws Exception {
        post(first, "/flash-sale/camera/rush?stock=5&buyers=10&locked=true");
        Map<?, ?> locks = (Map<?, ?>) ((Map<?, ?>) get(first, "/actuator/locks").get("backends")).get("redisLockTemplate");
        assertThat(locks.get("clientId").toString()).hasSize(32);
        assertThat(locks.get("held")).isInstanceOf(List.class);
        assertThat(locks.get("waiting")).isInstanceOf(List.class);
        Map<?, ?> health = get(first, "/actuator/health/lock");
        assertThat(health.get("status")).isEqualTo("UP");
        Map<?, ?> acquire = get(first, "/actuator/metrics/redis.lock.acquire");
        assertThat(acquire.get("availableTags").toString()).contains("outcome").contains("acquired").contains("name")
                .contains("redisLockTemplate");
        assertThat(get(first, "/actuator/metrics/redis.lock.held").get("name")).isEqualTo("redis.lock.held");
        assertThat(get(first, "/actuator/metrics/redis.lock.active").get("name")).isEqualTo("redis.lock.active");
    }

    @Test
    void theProgrammaticTemplateReturnsTheFencingToken() throws Exception {
        Map<?, ?> result = post(second, "/programmatic/report?workMillis=10");
        assertThat(result.get("key")).isEqualTo("programmatic:report");
        assertThat(((Number) result.get("fencingToken")).longValue()).isPositive();
        assertThat(result.get("heldBy")).isEqualTo("instance-b");
    }

    private static Map<?, ?> post(ConfigurableApplicationContext instance, String path) throws Exception {
        return send(instance, HttpRequest.newBuilder(uri(instance, path)).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    private static Map<?, ?> get(ConfigurableApplicationContext instance, String path) throws Exception {
        return send(instance, HttpRequest.newBuilder(uri(instance, path)).GET().build());
    }

    private static Map<?, ?> send(ConfigurableApplicationContext instance, HttpRequest request) throws Exception {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return json.readValue(response.body(), Map.class);
    }

    private static URI uri(ConfigurableApplicationContext instance, String path) {
        int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }
}
