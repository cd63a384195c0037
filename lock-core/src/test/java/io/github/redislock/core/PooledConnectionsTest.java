package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettucePoolingClientConfiguration;

/**
 * How many calls a connection factory runs at once, for factories set up each way (pure logic: the factories are
 * configured, never started).
 */
class PooledConnectionsTest {

    private static final int MOST = 64;

    private static final RedisStandaloneConfiguration STANDALONE = new RedisStandaloneConfiguration("127.0.0.1", 6390);
    private static final RedisClusterConfiguration CLUSTER = new RedisClusterConfiguration(List.of("127.0.0.1:7000"));
    private static final RedisSentinelConfiguration SENTINEL = new RedisSentinelConfiguration("mymaster",
            Set.of("127.0.0.1:26379"));

    @Test
    void pooledJedisRunsAsManyCallsAsItsPoolHasConnections() {
        assertThat(calls(new JedisConnectionFactory(STANDALONE, jedisPooled(12)), false)).isEqualTo(12);
        assertThat(calls(new JedisConnectionFactory(STANDALONE, JedisClientConfiguration.builder().usePooling().build()),
                false)).as("Jedis's default pool").isEqualTo(8);
    }

    @Test
    void jedisBehindSentinelIsAlwaysPooled() {
        assertThat(calls(new JedisConnectionFactory(SENTINEL, jedisPooled(5)), false)).isEqualTo(5);
        JedisConnectionFactory poolingOff = new JedisConnectionFactory(SENTINEL, JedisClientConfiguration.builder().build());
        poolingOff.setUseUnifiedJedis(false);
        assertThat(calls(poolingOff, false)).isEqualTo(8);
    }

    @Test
    void jedisForAClusterHasAPoolOfItsConfigurationPerNodeWithPoolingOnOrNot() {
        assertThat(calls(new JedisConnectionFactory(CLUSTER, jedisPooled(6)), false)).isEqualTo(6);
        JedisConnectionFactory notPooling = new JedisConnectionFactory(CLUSTER, JedisClientConfiguration.builder().build());
        notPooling.setUseUnifiedJedis(false);
        assertThat(calls(notPooling, false)).isEqualTo(8);
    }

    @Test
    void unifiedJedisTheDefaultWithJedis7IsAlwaysPooled() {
        JedisConnectionFactory unified = new JedisConnectionFactory(STANDALONE, JedisClientConfiguration.builder().build());
        assertThat(unified.isUseUnifiedJedis()).as("Spring Data Redis's default with Jedis 7").isTrue();
        assertThat(calls(unified, false)).isEqualTo(8);
    }

    @Test
    void jedisWithoutPoolingMakesAConnectionPerCallSoRunsAsManyAsAsked() {
        JedisConnectionFactory notPooling = new JedisConnectionFactory(STANDALONE,
                JedisClientConfiguration.builder().build());
        notPooling.setUseUnifiedJedis(false);
        assertThat(calls(notPooling, false)).isEqualTo(MOST);
    }

    @Test
    void aPoolLargerThanAskedOrWithoutALimitRunsAsManyAsAsked() {
        assertThat(calls(new JedisConnectionFactory(STANDALONE, jedisPooled(200)), false)).isEqualTo(MOST);
        assertThat(calls(new JedisConnectionFactory(STANDALONE, jedisPooled(-1)), false)).isEqualTo(MOST);
        assertThat(calls(lettuce(lettucePooled(-1), false), false)).isEqualTo(MOST);
    }

    @Test
    void pooledLettuceWithoutASharedConnectionRunsAsManyCallsAsItsPoolHasConnections() {
        assertThat(calls(lettuce(lettucePooled(7), false), false)).isEqualTo(7);
        assertThat(calls(lettuce(lettucePooled(7), false), true)).isEqualTo(7);
        assertThat(calls(lettuce(LettucePoolingClientConfiguration.defaultConfiguration(), false), false))
                .as("commons-pool's default").isEqualTo(8);
    }

    @Test
    void pooledLettuceSharingItsNativeConnectionBorrowsOnlyForPipelines() {
        assertThat(calls(lettuce(lettucePooled(7), true), false)).as("plain calls, on the shared connection")
                .isEqualTo(MOST);
        assertThat(calls(lettuce(lettucePooled(7), true), true)).as("pipelines, on a dedicated connection").isEqualTo(7);
    }

    @Test
    void lettuceWithoutPoolingRunsAsManyAsAsked() {
        LettuceClientConfiguration notPooling = LettuceClientConfiguration.defaultConfiguration();
        assertThat(calls(lettuce(notPooling, true), false)).isEqualTo(MOST);
        assertThat(calls(lettuce(notPooling, true), true)).isEqualTo(MOST);
        assertThat(calls(lettuce(notPooling, false), true)).isEqualTo(MOST);
        LettuceConnectionFactory cluster = new LettuceConnectionFactory(CLUSTER, notPooling);
        assertThat(calls(cluster, false)).isEqualTo(MOST);
    }

    @Test
    void aFactoryOfAnotherKindRunsAsManyAsAsked() {
        RedisConnectionFactory other = SubscriptionRouting.route(new JedisConnectionFactory(STANDALONE, jedisPooled(3)),
                new JedisConnectionFactory(STANDALONE, jedisPooled(3)));
        assertThat(calls(other, false)).isEqualTo(MOST);
    }

    private static int calls(RedisConnectionFactory factory, boolean pipelined) {
        return PooledConnections.callsAtOnce(factory, pipelined, MOST);
    }

    private static JedisClientConfiguration jedisPooled(int maxTotal) {
        return JedisClientConfiguration.builder().usePooling().poolConfig(pool(maxTotal)).build();
    }

    private static LettuceClientConfiguration lettucePooled(int maxTotal) {
        return LettucePoolingClientConfiguration.builder().poolConfig(pool(maxTotal)).build();
    }

    private static <T> GenericObjectPoolConfig<T> pool(int maxTotal) {
        GenericObjectPoolConfig<T> config = new GenericObjectPoolConfig<>();
        config.setMaxTotal(maxTotal);
        return config;
    }

    private static LettuceConnectionFactory lettuce(LettuceClientConfiguration client, boolean shareNativeConnection) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(STANDALONE, client);
        factory.setShareNativeConnection(shareNativeConnection);
        return factory;
    }
}
