package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * Threads taking the read or the write side of read/write locks at random, each recording the sections it ran, and
 * the check that no section overlapped a writer's.
 */
final class ReadWriteSections {

    /** One critical section, by this JVM's clock. */
    record Section(long enter, long exit, boolean writer) {
    }

    private ReadWriteSections() {
    }

    /**
     * Runs a thread per lock in {@code locks}, each taking {@code rounds} times the write side (with a chance of one
     * in {@code oneWriteIn}) or else the read side of its lock, holding it 2 ms.
     *
     * @return every section run, in the order they ended
     */
    static List<Section> run(List<ReadWriteLock> locks, int rounds, int oneWriteIn) throws Exception {
        List<Section> sections = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(locks.size());
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (ReadWriteLock lock : locks) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        boolean write = ThreadLocalRandom.current().nextInt(oneWriteIn) == 0;
                        Lock side = write ? lock.writeLock() : lock.readLock();
                        if (!side.tryLock(30, TimeUnit.SECONDS)) {
                            throw new AssertionError("not acquired within 30s");
                        }
                        long enter = System.nanoTime();
                        Thread.sleep(2); // widen the window an overlapping holder would need
                        long exit = System.nanoTime();
                        side.unlock();
                        sections.add(new Section(enter, exit, write));
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return sections;
    }

    /** Asserts that there were writers and that no other section, a reader's or a writer's, overlapped one of them. */
    static void assertNoSectionOverlapsAWriter(List<Section> sections) {
        List<Section> writers = sections.stream().filter(Section::writer).toList();
        assertThat(writers).isNotEmpty();
        for (Section writer : writers) {
            for (Section other : sections) {
                if (other != writer) {
                    assertThat(other.exit() <= writer.enter() || other.enter() >= writer.exit())
                            .as("a section overlapping a writer's").isTrue();
                }
            }
        }
    }
}
