package io.github.redislock.bench;

import java.time.Duration;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import io.github.redislock.core.LockOptions;
import io.github.redislock.core.PermitHandle;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.core.RedisSemaphore;
import io.github.redislock.core.RedlockTemplate;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * One lock library under test, as one client: a {@link Lock} per key, and for the libraries that have them
 * ({@link #hasLockFamily}) a fair lock, a read/write lock and a semaphore per key.
 */
abstract class Contender implements AutoCloseable {

    /**
     * Our template on Jedis (the starter's driver), then on Lettuce (Spring Boot's default driver), then the peers:
     * Redisson on its own client, Spring Integration's registry on Jedis and, suffixed {@value #ON_LETTUCE}, on Lettuce.
     */
    static final String[] NAMES = {"redis-lock", "redis-lock-lettuce", "redisson", "si-pubsub", "si-spin",
            "si-pubsub-lettuce", "si-spin-lettuce"};

    /** The suffix of a contender that runs on Lettuce rather than Jedis. */
    static final String ON_LETTUCE = "-lettuce";

    final String name;

    Contender(String name) {
        this.name = name;
    }

    abstract Lock lock(String key);

    /** Whether the named library has a fair lock, a read/write lock and a semaphore (Spring Integration has none). */
    static boolean hasLockFamily(String name) {
        return name.startsWith("redis-lock") || name.equals("redisson");
    }

    Lock fairLock(String key) {
        throw new UnsupportedOperationException(name + " has no fair lock");
    }

    ReadWriteLock readWriteLock(String key) {
        throw new UnsupportedOperationException(name + " has no read/write lock");
    }

    /** A semaphore on the key whose limit is {@code permits}. */
    Permits semaphore(String key, int permits) {
        throw new UnsupportedOperationException(name + " has no semaphore");
    }

    /** A library's semaphore, seen the same way for every library: one permit at a time. */
    interface Permits {

        /** Waits for one permit, without bound; running the result releases it. */
        Runnable acquire() throws InterruptedException;
    }

    /** A new client of the named library on {@code port}. */
    static Contender create(String name, int port) {
        return switch (name) {
            case "redis-lock" -> new Ours(name, jedis(port));
            case "redis-lock-lettuce" -> new Ours(name, lettuce(port));
            case "redisson" -> new RedissonContender(port);
            case "si-pubsub" -> new SpringIntegration(name, jedis(port), RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
            case "si-spin" -> new SpringIntegration(name, jedis(port), RedisLockRegistry.RedisLockType.SPIN_LOCK);
            case "si-pubsub-lettuce" -> new SpringIntegration(name, lettuce(port), RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
            case "si-spin-lettuce" -> new SpringIntegration(name, lettuce(port), RedisLockRegistry.RedisLockType.SPIN_LOCK);
            default -> throw new IllegalArgumentException("unknown contender " + name);
        };
    }

    static JedisConnectionFactory jedis(int port) {
        JedisClientConfiguration client = JedisClientConfiguration.builder().usePooling().build();
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port), client);
        factory.getPoolConfig().setMaxTotal(64);
        factory.getPoolConfig().setMaxIdle(64);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** Lettuce as Spring Boot sets it up by default: one shared native connection, no pool. */
    static LettuceConnectionFactory lettuce(int port) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** Our template, on the given client's connections (Jedis or Lettuce). */
    static final class Ours extends Contender {
        private final DisposableBean factory;
        private final RedisConnectionFactory connections;
        final RedisLockTemplate template;

        <F extends RedisConnectionFactory & DisposableBean> Ours(String name, F factory) {
            super(name);
            this.factory = factory;
            this.connections = factory;
            template = new RedisLockTemplate(new StringRedisTemplate(factory));
        }

        /** The connection factory the template runs on. */
        RedisConnectionFactory connections() {
            return connections;
        }

        @Override
        Lock lock(String key) {
            return template.lock(key);
        }

        @Override
        Lock fairLock(String key) {
            return template.fairLock(key);
        }

        @Override
        ReadWriteLock readWriteLock(String key) {
            return template.readWriteLock(key);
        }

        @Override
        Permits semaphore(String key, int permits) {
            RedisSemaphore semaphore = template.semaphore(key, permits);
            LockOptions waitForever = LockOptions.waitFor(LockOptions.WAIT_FOREVER);
            return () -> {
                PermitHandle permit = semaphore.acquire(waitForever);
                return permit::release;
            };
        }

        @Override
        public void close() throws Exception {
            template.close();
            factory.destroy();
        }
    }

    /** Our {@code RedlockTemplate} over independent masters on {@code ports}. */
    static final class OursRedlock extends Contender {
        private final java.util.List<JedisConnectionFactory> factories = new java.util.ArrayList<>();
        private final RedlockTemplate template;

        OursRedlock(java.util.List<Integer> ports) {
            super("redis-lock");
            java.util.Map<String, StringRedisTemplate> nodes = new java.util.LinkedHashMap<>();
            for (int port : ports) {
                JedisConnectionFactory factory = jedis(port);
                factories.add(factory);
                nodes.put("127.0.0.1:" + port, new StringRedisTemplate(factory));
            }
            template = new RedlockTemplate(nodes, io.github.redislock.core.RedisLockConfig.defaults(),
                    RedlockTemplate.DEFAULT_NODE_TIMEOUT);
        }

        @Override
        Lock lock(String key) {
            return template.lock(key);
        }

        @Override
        public void close() {
            template.close();
            factories.forEach(JedisConnectionFactory::destroy);
        }
    }

    /** Redisson's {@code RedissonRedLock} (a {@code RedissonMultiLock} held on a majority) over one client per master. */
    static final class RedissonRedlock extends Contender {
        private final java.util.List<RedissonClient> clients = new java.util.ArrayList<>();

        RedissonRedlock(java.util.List<Integer> ports) {
            super("redisson");
            for (int port : ports) {
                Config config = NettyTransport.redisson(new Config());
                config.useSingleServer().setAddress("redis://127.0.0.1:" + port).setConnectionPoolSize(64)
                        .setConnectionMinimumIdleSize(8);
                clients.add(Redisson.create(config));
            }
        }

        @Override
        @SuppressWarnings("deprecation") // RedissonRedLock is deprecated in favour of a single lock; it is the peer here
        Lock lock(String key) {
            return new org.redisson.RedissonRedLock(clients.stream().map(c -> c.getLock(key)).toArray(org.redisson.api.RLock[]::new));
        }

        @Override
        public void close() {
            clients.forEach(RedissonClient::shutdown);
        }
    }

    static final class RedissonContender extends Contender {
        private final RedissonClient client;

        RedissonContender(int port) {
            super("redisson");
            Config config = NettyTransport.redisson(new Config());
            config.useSingleServer().setAddress("redis://127.0.0.1:" + port).setConnectionPoolSize(64)
                    .setConnectionMinimumIdleSize(8);
            client = Redisson.create(config);
        }

        @Override
        Lock lock(String key) {
            return client.getLock(key);
        }

        @Override
        Lock fairLock(String key) {
            return client.getFairLock(key);
        }

        @Override
        ReadWriteLock readWriteLock(String key) {
            return client.getReadWriteLock(key);
        }

        @Override
        Permits semaphore(String key, int permits) {
            RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore(key);
            semaphore.trySetPermits(permits); // false when an earlier client set them: the key is the same every round
            return () -> {
                String id = semaphore.acquire();
                return () -> semaphore.release(id);
            };
        }

        @Override
        public void close() {
            client.shutdown();
        }
    }

    static final class SpringIntegration extends Contender {
        private final DisposableBean factory;
        private final RedisLockRegistry registry;

        <F extends RedisConnectionFactory & DisposableBean> SpringIntegration(String name, F factory,
                RedisLockRegistry.RedisLockType type) {
            super(name);
            this.factory = factory;
            registry = new RedisLockRegistry(factory, "si-" + name, Duration.ofSeconds(30).toMillis());
            registry.setRedisLockType(type);
        }

        @Override
        Lock lock(String key) {
            return registry.obtain(key);
        }

        @Override
        public void close() throws Exception {
            registry.destroy();
            factory.destroy();
        }
    }

}
