package io.github.redislock.sample;

import java.util.UUID;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * This instance's id: {@code sample.instance-id} ({@code INSTANCE_ID}), else a random one chosen once. Every bean
 * asks this one for it: a {@code ${random.value}} default would be drawn anew wherever it is injected, and the
 * report job would record an id the endpoints never show.
 */
@Component
public class SampleInstance {

    private final String id;

    public SampleInstance(@Value("${sample.instance-id:}") String configured) {
        this.id = configured.isBlank() ? UUID.randomUUID().toString().substring(0, 8) : configured;
    }

    public String id() {
        return id;
    }
}
