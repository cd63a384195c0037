package io.github.redislock.sample;

import java.time.Duration;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockLostException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * Replays the failure fencing tokens exist for: this instance takes the account's lock with a 200 ms
 * lease and stalls for 500 ms (a GC pause, say); its lease ends and another instance (a second lock
 * client, as another JVM would be) takes the lock and writes. The stalled holder's late write carries
 * the older token and the ledger refuses it.
 */
@Component
public class StaleWriteDemo implements DisposableBean {

    private final RedisLockTemplate locks;
    private final RedisLockTemplate otherInstance;
    private final FencedLedger ledger;

    public StaleWriteDemo(RedisLockTemplate locks, StringRedisTemplate redis, FencedLedger ledger) {
        this.locks = locks;
        this.otherInstance = new RedisLockTemplate(redis, locks.config());
        this.ledger = ledger;
    }

    public Result run(String account) throws InterruptedException {
        String key = "account:" + account;
        LockHandle stalled = locks.acquire(key, LockOptions.waitFor(Duration.ofSeconds(5)).withLease(Duration.ofMillis(200)));
        long staleBalance = ledger.balance(account) + 1_000_000;
        Thread.sleep(500); // the pause: the lease ends meanwhile
        Write newer = otherInstance.execute(key, LockOptions.waitFor(Duration.ofSeconds(5)), lock -> {
            long balance = ledger.balance(account) + 10;
            return new Write(lock.fencingToken(), ledger.write(account, balance, lock.fencingToken()));
        });
        boolean staleAccepted = ledger.write(account, staleBalance, stalled.fencingToken());
        boolean heldAfterPause = stalled.isHeld();
        String releaseOutcome;
        try {
            stalled.release();
            releaseOutcome = "released";
        } catch (LockLostException lost) {
            releaseOutcome = lost.getMessage();
        }
        return new Result(stalled.fencingToken(), heldAfterPause, newer, staleAccepted, releaseOutcome, ledger.balance(account));
    }

    @Override
    public void destroy() {
        otherInstance.close();
    }

    public record Write(long fencingToken, boolean accepted) {
    }

    public record Result(long staleToken, boolean staleHolderStillHeldLock, Write newerWrite, boolean staleWriteAccepted,
            String staleRelease, long balance) {
    }
}
