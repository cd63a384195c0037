package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * The exact order of what reaches Redis and the database: the lock is taken before the transaction
 * begins and released after it commits or rolls back. Recorded at the wire, not inferred.
 */
@WithRedis
class LockTransactionOrderTest {

    static RedisServerProcess server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    RedisLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=" + server.port())
            .withUserConfiguration(Recording.class);

    @Test
    void lockThenBeginThenCommitThenUnlock() {
        runner.run(context -> {
            Events events = context.getBean(Events.class);
            Payments payments = context.getBean(Payments.class);
            events.clear();
            payments.pay("p-1");
            assertThat(events.list()).containsExactly("lock payment:p-1", "begin", "insert", "commit", "unlock payment:p-1");
        });
    }

    @Test
    void lockThenBeginThenRollbackThenUnlock() {
        runner.run(context -> {
            Events events = context.getBean(Events.class);
            Payments payments = context.getBean(Payments.class);
            events.clear();
            assertThatThrownBy(() -> payments.payThenFail("p-2")).hasMessage("card declined");
            assertThat(events.list()).containsExactly("lock payment:p-2", "begin", "insert", "rollback", "unlock payment:p-2");
        });
    }

    @Test
    void anAdvisorOrderInsideTheTransactionBeginsFirstButStillUnlocksAfterTheCommit() {
        runner.withPropertyValues("redis-lock.advisor-order=" + Integer.MAX_VALUE).run(context -> {
            Events events = context.getBean(Events.class);
            events.clear();
            context.getBean(Payments.class).pay("p-3");
            assertThat(events.list()).containsExactly("begin", "lock payment:p-3", "insert", "commit", "unlock payment:p-3");
        });
    }

    /** What reached Redis and the database, in order. */
    static final class Events {

        private final List<String> events = new CopyOnWriteArrayList<>();

        void add(String event) {
            events.add(event);
        }

        void clear() {
            events.clear();
        }

        List<String> list() {
            return List.copyOf(events);
        }
    }

    /** Records the lock engine's acquire and release scripts as they succeed. */
    static final class RecordingRedisTemplate extends StringRedisTemplate {

        private final Events events;

        RecordingRedisTemplate(RedisConnectionFactory factory, Events events) {
            super(factory);
            this.events = events;
        }

        @Override
        public <T> T execute(RedisScript<T> script, List<String> keys, Object... args) {
            T result = super.execute(script, keys, args);
            String source = script.getScriptAsString();
            // the scripts' header comments say which they are; KEYS[1] is the lock, redis-lock:{name}
            if (source.startsWith("-- Acquires") && result instanceof Long reply && reply > 0) {
                events.add("lock " + nameOf(keys.get(0)));
            } else if (source.startsWith("-- Releases") && result instanceof Long reply && reply == 1) {
                events.add("unlock " + nameOf(keys.get(0)));
            }
            return result;
        }

        private static String nameOf(String redisKey) {
            return redisKey.substring(redisKey.indexOf('{') + 1, redisKey.lastIndexOf('}'));
        }
    }

    /** Records begin (auto-commit off), commit and rollback of every connection. */
    static final class RecordingDataSource extends DelegatingDataSource {

        private final Events events;

        RecordingDataSource(DataSource target, Events events) {
            super(target);
            this.events = events;
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection connection = super.getConnection();
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "setAutoCommit" -> {
                                if (Boolean.FALSE.equals(args[0])) {
                                    events.add("begin");
                                }
                            }
                            case "commit" -> events.add("commit");
                            case "rollback" -> events.add("rollback");
                            default -> {
                            }
                        }
                        try {
                            return method.invoke(connection, args);
                        } catch (InvocationTargetException e) {
                            throw e.getTargetException();
                        }
                    });
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Recording {

        @Bean
        Events events() {
            return new Events();
        }

        @Bean
        StringRedisTemplate stringRedisTemplate(RedisConnectionFactory factory, Events events) {
            return new RecordingRedisTemplate(factory, events);
        }

        @Bean
        DataSource dataSource(Events events) {
            return new RecordingDataSource(new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
                    .generateUniqueName(true).addScript("classpath:accounts.sql").build(), events);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Payments payments(DataSource dataSource, Events events) {
            return new Payments(new JdbcTemplate(dataSource), events);
        }
    }

    public static class Payments {

        private final JdbcTemplate jdbc;
        private final Events events;

        public Payments(JdbcTemplate jdbc, Events events) {
            this.jdbc = jdbc;
            this.events = events;
        }

        @DistributedLock(key = "'payment:' + #id")
        @Transactional
        public void pay(String id) {
            jdbc.update("insert into account(id, balance) values (?, 1)", id);
            events.add("insert");
        }

        @DistributedLock(key = "'payment:' + #id")
        @Transactional
        public void payThenFail(String id) {
            jdbc.update("insert into account(id, balance) values (?, 1)", id);
            events.add("insert");
            throw new IllegalStateException("card declined");
        }
    }
}
