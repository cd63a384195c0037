package io.github.redislock.sample;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.FencingToken;
import org.springframework.stereotype.Service;

/** Deposits under a per-account lock, written to {@link FencedLedger} with the lock's fencing token. */
@Service
public class LedgerService {

    private final FencedLedger ledger;

    public LedgerService(FencedLedger ledger) {
        this.ledger = ledger;
    }

    /** The advisor passes the token in place of the caller's placeholder {@code 0}. */
    @DistributedLock(key = "'account:' + #account", waitTime = "5s")
    public Deposit deposit(String account, long amount, @FencingToken long token) {
        long balance = ledger.balance(account) + amount;
        boolean accepted = ledger.write(account, balance, token);
        return new Deposit(account, amount, token, accepted, ledger.balance(account));
    }

    public record Deposit(String account, long amount, long fencingToken, boolean accepted, long balance) {
    }

}
