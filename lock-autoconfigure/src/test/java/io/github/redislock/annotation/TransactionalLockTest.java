package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.test.Concurrently;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** The lock outlives the transaction: held until commit or rollback, on a real H2 database and a real Redis. */
@WithRedis
class TransactionalLockTest {

    static RedisServerProcess server;

    private ApplicationContextRunner runner(String database) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + server.port(), "test.database=" + database)
                .withUserConfiguration(Database.class);
    }

    @Test
    void theLockIsTakenBeforeTheTransactionBeginsAndReleasedAfterItCommits() {
        runner("order").run(context -> {
            Accounts accounts = context.getBean(Accounts.class);
            accounts.events().clear();
            accounts.deposit("acc-1", 10);
            assertThat(accounts.events()).containsExactly("lock held at begin", "commit", "lock held after commit");
            assertThat(server.command("EXISTS", "redis-lock:{account:acc-1}")).as("released after the commit").isEqualTo("0");
        });
    }

    @Test
    void aSecondCallerReadsOnlyTheCommittedBalanceOfTheFirstSoNoUpdateIsLost() {
        runner("lost-updates").run(context -> {
            Accounts accounts = context.getBean(Accounts.class);
            Concurrently.run(8, 10, thread -> accounts.deposit("acc-2", 1));
            assertThat(accounts.balance("acc-2")).isEqualTo(80);
        });
    }

    @Test
    void joiningAnOuterTransactionKeepsTheLockUntilTheOuterTransactionCompletes() {
        runner("outer").run(context -> {
            Accounts accounts = context.getBean(Accounts.class);
            Transfers transfers = context.getBean(Transfers.class);
            List<String> seen = transfers.depositInOuterTransaction(accounts, "acc-3");
            assertThat(seen).containsExactly("inner returned, lock still held", "outer committed, lock still held");
            assertThat(server.command("EXISTS", "redis-lock:{account:acc-3}")).isEqualTo("0");
        });
    }

    @Test
    void theAdvisorWorksWithoutAspectJOnTheClasspath() {
        runner("no-aspectj").withClassLoader(new FilteredClassLoader("org.aspectj")).run(context -> {
            Accounts accounts = context.getBean(Accounts.class);
            assertThat(AopUtils.isAopProxy(accounts)).isTrue();
            accounts.events().clear();
            accounts.deposit("acc-4", 5);
            assertThat(accounts.events()).containsExactly("lock held at begin", "commit", "lock held after commit");
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Database {

        @Bean(destroyMethod = "shutdown")
        org.springframework.jdbc.datasource.embedded.EmbeddedDatabase dataSource(
                org.springframework.core.env.Environment environment) {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
                    .setName(environment.getProperty("test.database") + System.nanoTime())
                    .addScript("classpath:accounts.sql").build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Accounts accounts(DataSource dataSource) {
            return new Accounts(new JdbcTemplate(dataSource));
        }

        @Bean
        Transfers transfers() {
            return new Transfers();
        }
    }

    public static class Accounts {

        final JdbcTemplate jdbc;
        final List<String> events = new CopyOnWriteArrayList<>();

        public Accounts(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @DistributedLock(key = "'account:' + #id", waitTime = "30s")
        @Transactional
        public void deposit(String id, long amount) throws InterruptedException {
            events.add(lockHeld(id) ? "lock held at begin" : "LOCK NOT HELD at begin");
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    events.add("commit");
                }

                @Override
                public void afterCompletion(int status) {
                    events.add(lockHeld(id) ? "lock held after commit" : "LOCK RELEASED before commit ended");
                }
            });
            List<Long> balance = jdbc.queryForList("select balance from account where id = ?", Long.class, id);
            long current = balance.isEmpty() ? 0 : balance.get(0);
            Thread.sleep(2); // a caller that slipped in now would read the same balance
            if (balance.isEmpty()) {
                jdbc.update("insert into account(id, balance) values (?, ?)", id, current + amount);
            } else {
                jdbc.update("update account set balance = ? where id = ?", current + amount, id);
            }
        }

        public List<String> events() {
            return events;
        }

        public long balance(String id) {
            return jdbc.queryForObject("select balance from account where id = ?", Long.class, id);
        }

        static boolean lockHeld(String id) {
            return "1".equals(server.command("EXISTS", "redis-lock:{account:" + id + "}"));
        }
    }

    public static class Transfers {

        @Transactional
        public List<String> depositInOuterTransaction(Accounts accounts, String id) throws InterruptedException {
            List<String> seen = new ArrayList<>();
            accounts.deposit(id, 1);
            seen.add(Accounts.lockHeld(id) ? "inner returned, lock still held" : "inner returned, LOCK RELEASED");
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public int getOrder() {
                    return HIGHEST_PRECEDENCE; // runs before the lock's own release
                }

                @Override
                public void afterCommit() {
                    seen.add(Accounts.lockHeld(id) ? "outer committed, lock still held" : "outer committed, LOCK RELEASED");
                }
            });
            return seen;
        }
    }
}
