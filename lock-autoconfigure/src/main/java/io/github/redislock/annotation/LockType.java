package io.github.redislock.annotation;

/** Kinds of lock. */
public enum LockType {

    /** Exclusive and reentrant. */
    EXCLUSIVE,

    /** First come, first served across clients. Not available yet: using it fails at start-up. */
    FAIR,

    /** Shared with other readers, exclusive of writers. Not available yet: using it fails at start-up. */
    READ,

    /** Exclusive of readers and writers. Not available yet: using it fails at start-up. */
    WRITE
}
