package io.github.redislock.core;

import java.util.concurrent.locks.ReentrantLock;

/**
 * This client's read share of one key: one reader entry in Redis (its {@link #holding}: owner, epoch token,
 * lease) held for the reading threads that joined it. Closed, it takes no new readers: a writer waits, or its
 * last reader left. {@link ReadShares} keeps the newest share of each key.
 */
final class ReadShare {

    final LocalLock holding;
    private final ReentrantLock lock = new ReentrantLock();
    private int readers = 1;
    private boolean closed;

    ReadShare(LocalLock holding) {
        this.holding = holding;
    }

    /** Counts one more reader in, if it is open and still held. */
    boolean join() {
        lock.lock();
        try {
            if (closed || !holding.isValid()) {
                return false;
            }
            readers++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Counts one reader out; returns whether it was the last (the share is then closed for good). */
    boolean leave() {
        lock.lock();
        try {
            if (--readers > 0) {
                return false;
            }
            closed = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    void close() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    boolean isOpen() {
        lock.lock();
        try {
            return !closed;
        } finally {
            lock.unlock();
        }
    }

    int readers() {
        lock.lock();
        try {
            return readers;
        } finally {
            lock.unlock();
        }
    }
}
