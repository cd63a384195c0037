package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.codec.ByteArrayCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The script call's arguments as {@link LettuceScriptCalls} writes them to the connection: plain RESP, as Lettuce's own. */
class LettuceScriptArgsTest {

    @Test
    void aScriptCallIsWrittenAsTheSameRespCommandLettucesOwnEvalshaWrites() {
        LettuceScriptCalls.ScriptArgs args = new LettuceScriptCalls.ScriptArgs(bytes("abc"),
                new byte[][] {bytes("redis-lock:{k}"), bytes("redis-lock:{k}:fence")},
                new byte[][] {bytes("owner"), bytes(""), bytes("30000"), bytes("ünï")});

        ByteBuf ours = Unpooled.buffer();
        new Command<>(CommandType.EVALSHA, new IntegerOutput<>(ByteArrayCodec.INSTANCE), args).encode(ours);
        ByteBuf lettuces = Unpooled.buffer();
        new Command<>(CommandType.EVALSHA, new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new io.lettuce.core.protocol.CommandArgs<>(ByteArrayCodec.INSTANCE).add(bytes("abc")).add(2)
                        .addKeys(bytes("redis-lock:{k}"), bytes("redis-lock:{k}:fence"))
                        .addValues(bytes("owner"), bytes(""), bytes("30000"), bytes("ünï"))).encode(lettuces);

        assertThat(ours.toString(StandardCharsets.UTF_8)).isEqualTo(lettuces.toString(StandardCharsets.UTF_8))
                .startsWith("*9\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n2\r\n$14\r\nredis-lock:{k}\r\n");
        assertThat(args.count()).isEqualTo(8);
        assertThat(args.getFirstEncodedKey()).isEqualTo(java.nio.ByteBuffer.wrap(bytes("redis-lock:{k}")));
    }

    @Test
    void numbersOfEveryLengthAreWrittenInDecimal() {
        for (int n : new int[] {0, 7, 9, 10, 99, 100, 12345, Integer.MAX_VALUE}) {
            ByteBuf buf = Unpooled.buffer();
            LettuceScriptCalls.ScriptArgs.decimal(buf, n);
            assertThat(buf.toString(StandardCharsets.US_ASCII)).isEqualTo(Integer.toString(n));
            assertThat(LettuceScriptCalls.ScriptArgs.digits(n)).isEqualTo(Integer.toString(n).length());
        }
    }

    @Test
    void aCallWithManyKeysWritesTheirCountInFull() {
        byte[][] keys = new byte[12][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = bytes("key" + i);
        }
        ByteBuf ours = Unpooled.buffer();
        new LettuceScriptCalls.ScriptArgs(bytes("sha"), keys, new byte[0][]).encode(ours);
        assertThat(ours.toString(StandardCharsets.US_ASCII)).startsWith("$3\r\nsha\r\n$2\r\n12\r\n$4\r\nkey0\r\n");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
