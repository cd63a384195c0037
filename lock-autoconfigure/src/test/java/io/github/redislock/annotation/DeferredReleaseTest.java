package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A lock taken inside a running transaction is released when that transaction ends, commit or
 * rollback, on the thread that took it; also when the transaction advisor was ordered outside the lock.
 */
@ExtendWith(OutputCaptureExtension.class)
@WithRedis
class DeferredReleaseTest {

    static RedisServerProcess server;

    private ApplicationContextRunner runner(Class<?> database) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + server.port())
                .withUserConfiguration(database);
    }

    static boolean held(String key) {
        return "1".equals(server.command("EXISTS", "redis-lock:{" + key + "}"));
    }

    @Test
    void aLockTakenInsideAnOuterTransactionIsKeptThroughItsRollbackAndReleasedAfter() {
        runner(Database.class).run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            List<String> seen = new CopyOnWriteArrayList<>();
            assertThatThrownBy(() -> outer.executeWithoutResult(status -> {
                ledger.post("rollback", 5);
                seen.add(held("ledger:rollback") ? "held after the method" : "RELEASED after the method");
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public int getOrder() {
                        return Ordered.HIGHEST_PRECEDENCE;
                    }

                    @Override
                    public void afterCompletion(int completion) {
                        seen.add((completion == STATUS_ROLLED_BACK ? "rolled back, " : "committed?, ")
                                + (held("ledger:rollback") ? "held" : "RELEASED"));
                    }
                });
                throw new IllegalStateException("the caller changes its mind");
            })).hasMessage("the caller changes its mind");
            assertThat(seen).containsExactly("held after the method", "rolled back, held");
            assertThat(held("ledger:rollback")).as("released once the rollback is done").isFalse();
            assertThat(ledger.count("rollback")).isZero();
        });
    }

    @Test
    void theDeferredReleaseRunsOnTheThreadThatTookTheLock() {
        runner(Database.class).run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            outer.executeWithoutResult(status -> ledger.post("thread", 1));
            // a release from another thread would have been refused, leaving the lock to its watchdog
            assertThat(held("ledger:thread")).isFalse();
            assertThat(context.getBean(io.github.redislock.core.RedisLockTemplate.class).diagnostics().localLockCount()).isZero();
        });
    }

    @Test
    void evenWhenTheTransactionAdvisorRunsFirstTheLockIsHeldUntilTheCommit() {
        runner(TransactionFirstDatabase.class).run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            ledger.post("tx-first", 3);
            assertThat(ledger.events()).containsExactly("held at afterCommit", "held at afterCompletion");
            assertThat(held("ledger:tx-first")).isFalse();
            assertThat(ledger.count("tx-first")).isEqualTo(1);
        });
    }

    @Test
    void aTransactionCompletingOnAnotherThreadCannotReleaseTheLockAndSaysSo(CapturedOutput output) {
        runner(Database.class).run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            TransactionSynchronizationManager.initSynchronization();
            TransactionSynchronizationManager.setActualTransactionActive(true);
            try {
                ledger.mark("elsewhere");
                List<TransactionSynchronization> pending = TransactionSynchronizationManager.getSynchronizations();
                assertThat(pending).hasSize(1);
                assertThat(held("ledger:elsewhere")).as("held until the transaction completes").isTrue();

                Thread other = new Thread(() -> pending.get(0).afterCompletion(TransactionSynchronization.STATUS_ROLLED_BACK),
                        "transaction-reaper");
                other.start();
                other.join(5000);
                assertThat(output).contains("completed on thread 'transaction-reaper'")
                        .contains("the lock cannot be released from here");
                assertThat(held("ledger:elsewhere")).isTrue();

                pending.get(0).afterCompletion(TransactionSynchronization.STATUS_COMMITTED);
                assertThat(held("ledger:elsewhere")).as("released from the acquiring thread").isFalse();
            } finally {
                TransactionSynchronizationManager.setActualTransactionActive(false);
                TransactionSynchronizationManager.clearSynchronization();
            }
        });
    }

    @Test
    void aLockLostBeforeTheOuterTransactionCompletedIsLoggedNotThrown(CapturedOutput output) {
        runner(Database.class).withPropertyValues("redis-lock.lease-time=600ms").run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            outer.executeWithoutResult(status -> {
                ledger.mark("lost");
                server.command("DEL", "redis-lock:{ledger:lost}");
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
                while (!output.toString().contains("was lost") && System.nanoTime() < deadline) {
                    pause(20);
                }
            });
            assertThat(output).contains("Releasing the lock of @DistributedLock on " + Ledger.class.getName() + ".mark(String)")
                    .contains("[ledger:lost] after its transaction completed failed")
                    .contains("was lost before it was released");
            assertThat(context.getBean(io.github.redislock.core.RedisLockTemplate.class).diagnostics().localLockCount()).isZero();
        });
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Database {

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true)
                    .addScript("classpath:accounts.sql").build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Ledger ledger(DataSource dataSource) {
            return new Ledger(new JdbcTemplate(dataSource));
        }
    }

    /** The transaction advisor outside the lock advisor: the wrong order, which the deferred release makes safe. */
    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = Ordered.HIGHEST_PRECEDENCE)
    static class TransactionFirstDatabase extends Database {
    }

    public static class Ledger {

        private final JdbcTemplate jdbc;
        final List<String> events = new CopyOnWriteArrayList<>();

        public Ledger(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @DistributedLock(key = "'ledger:' + #id", waitTime = "5s")
        @Transactional
        public void post(String id, long amount) {
            String key = "ledger:" + id;
            if (TransactionSynchronizationManager.isSynchronizationActive()) {
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        events.add(held(key) ? "held at afterCommit" : "RELEASED at afterCommit");
                    }

                    @Override
                    public void afterCompletion(int status) {
                        events.add(held(key) ? "held at afterCompletion" : "RELEASED at afterCompletion");
                    }
                });
            }
            jdbc.update("insert into account(id, balance) values (?, ?)", id + ":" + System.nanoTime(), amount);
        }

        @DistributedLock(key = "'ledger:' + #id", waitTime = "5s")
        public void mark(String id) {
        }

        public List<String> events() {
            return events;
        }

        public long count(String id) {
            return jdbc.queryForObject("select count(*) from account where id like ?", Long.class, id + ":%");
        }
    }
}
