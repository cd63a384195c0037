package io.github.redislock.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.StringUtils;

/**
 * One client per Redlock node, made from {@code redis-lock.redlock.nodes} with the application's Redis driver, and
 * stopped with the application (after the {@code redlockTemplate} that uses them).
 */
public final class RedlockConnections implements DisposableBean {

    /** The Redis driver the nodes' clients use. */
    enum Driver {
        LETTUCE, JEDIS
    }

    private final Map<String, StringRedisTemplate> templates = new LinkedHashMap<>();
    private final List<DisposableBean> factories = new ArrayList<>();

    RedlockConnections(List<String> uris, Duration timeout, Driver driver) {
        try {
            for (int i = 0; i < uris.size(); i++) {
                Address address = Address.parse(uris.get(i), "redis-lock.redlock.nodes[" + i + "]");
                if (templates.containsKey(address.name())) {
                    throw new IllegalStateException("redis-lock.redlock.nodes[" + i + "] = '" + address.name()
                            + "' is listed twice; Redlock needs independent masters");
                }
                RedisConnectionFactory factory = driver == Driver.LETTUCE ? lettuce(address, timeout) : jedis(address, timeout);
                templates.put(address.name(), new StringRedisTemplate(factory));
            }
        } catch (RuntimeException e) {
            destroy();
            throw e;
        }
    }

    /** The nodes' clients by {@code host:port}. */
    Map<String, StringRedisTemplate> templates() {
        return templates;
    }

    private RedisConnectionFactory lettuce(Address address, Duration timeout) {
        RedisConnectionFactory factory = LettuceNodes.create(address, timeout);
        factories.add((DisposableBean) factory);
        return factory;
    }

    private RedisConnectionFactory jedis(Address address, Duration timeout) {
        RedisConnectionFactory factory = JedisNodes.create(address, timeout);
        factories.add((DisposableBean) factory);
        return factory;
    }

    @Override
    public void destroy() {
        for (DisposableBean factory : factories) {
            try {
                factory.destroy();
            } catch (Exception ignored) {
                // best effort at shutdown
            }
        }
        factories.clear();
    }

    /** Lettuce clients; a class of its own so that Lettuce is loaded only when it is the driver. */
    private static final class LettuceNodes {

        static RedisConnectionFactory create(Address address, Duration timeout) {
            LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
                    .commandTimeout(timeout);
            if (address.ssl()) {
                client.useSsl();
            }
            LettuceConnectionFactory factory = new LettuceConnectionFactory(address.configuration(), client.build());
            factory.afterPropertiesSet();
            factory.start();
            return factory;
        }
    }

    /** Jedis clients (pooled); a class of its own so that Jedis is loaded only when it is the driver. */
    private static final class JedisNodes {

        static RedisConnectionFactory create(Address address, Duration timeout) {
            JedisClientConfiguration.JedisClientConfigurationBuilder client = JedisClientConfiguration.builder()
                    .connectTimeout(timeout).readTimeout(timeout);
            if (address.ssl()) {
                client.useSsl();
            }
            client.usePooling();
            JedisConnectionFactory factory = new JedisConnectionFactory(address.configuration(), client.build());
            factory.afterPropertiesSet();
            factory.start();
            return factory;
        }
    }

    /** One {@code redis://[user:password@]host:port[/db]} (or {@code rediss://}) node address. */
    record Address(String host, int port, @Nullable String username, @Nullable String password, int database, boolean ssl) {

        /**
         * @param property the property it came from, for messages
         * @throws IllegalStateException naming the property and what is wrong (never the password)
         */
        static Address parse(String uri, String property) {
            if (!StringUtils.hasText(uri)) {
                throw new IllegalStateException(property + " is blank; give redis://host:port");
            }
            URI parsed;
            try {
                parsed = new URI(uri.trim());
            } catch (URISyntaxException e) {
                throw new IllegalStateException(property + " is not a redis://[user:password@]host:port[/db] URI: "
                        + e.getReason());
            }
            String scheme = parsed.getScheme();
            if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
                throw new IllegalStateException(property + " must start with redis:// (or rediss:// for TLS), not "
                        + (scheme == null ? "no scheme" : scheme + "://"));
            }
            if (parsed.getHost() == null) {
                throw new IllegalStateException(property + " names no host; give redis://host:port");
            }
            int port = parsed.getPort() < 0 ? 6379 : parsed.getPort();
            String username = null;
            String password = null;
            String userInfo = parsed.getUserInfo(); // percent-decoded
            if (userInfo != null) {
                int colon = userInfo.indexOf(':');
                username = colon < 0 ? userInfo : userInfo.substring(0, colon);
                password = colon < 0 ? null : userInfo.substring(colon + 1);
                if (colon < 0) { // redis://password@host, as Lettuce reads it
                    password = username;
                    username = null;
                }
            }
            int database = 0;
            String path = parsed.getPath();
            if (path != null && path.length() > 1) {
                try {
                    database = Integer.parseInt(path.substring(1));
                } catch (NumberFormatException e) {
                    throw new IllegalStateException(property + " has '" + path + "' after the port; only a database number "
                            + "(/0, /1, ...) may follow it");
                }
            }
            return new Address(parsed.getHost(), port, StringUtils.hasText(username) ? username : null, password, database,
                    "rediss".equals(scheme));
        }

        /** {@code host:port}, the node's name in messages: never the password. */
        String name() {
            return host + ":" + port;
        }

        RedisStandaloneConfiguration configuration() {
            RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(host, port);
            configuration.setDatabase(database);
            if (username != null) {
                configuration.setUsername(username);
            }
            if (password != null) {
                configuration.setPassword(password);
            }
            return configuration;
        }

        @Override
        public String toString() {
            return (ssl ? "rediss://" : "redis://") + name() + (database == 0 ? "" : "/" + database);
        }
    }
}
