/**
 * The fault harness (not published): {@link io.github.redislock.chaos.ChaosRun} injects faults (kills, stalls,
 * restarts, failovers, frozen nodes) into Redis processes, worker JVMs and the network between them while workers
 * contend for locks, records every critical section on a fenced resource, checks the history for overlaps and stale
 * writes, and writes {@code docs/reliability.md}.
 */
@NullMarked
package io.github.redislock.chaos;

import org.jspecify.annotations.NullMarked;
