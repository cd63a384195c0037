package io.github.redislock.sample;

import io.github.redislock.annotation.DistributedLock;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Service;

/**
 * A flash sale: stock lives in Redis and every purchase is a read-check-write. Without the lock,
 * concurrent buyers read the same stock and the item is oversold; with it, never.
 */
@Service
public class InventoryService {

    private final StringRedisTemplate redis;

    public InventoryService(StringRedisTemplate redis) {
        this.redis = redis;
    }

    public void restock(String item, int stock) {
        redis.opsForValue().set(stockKey(item), Integer.toString(stock));
        redis.delete(soldKey(item));
    }

    @DistributedLock(key = "'flash-sale:' + #item", waitTime = "10s")
    public boolean buyWithLock(String item) {
        return buy(item);
    }

    public boolean buyWithoutLock(String item) {
        return buy(item);
    }

    public Stock stock(String item) {
        String stock = redis.opsForValue().get(stockKey(item));
        String sold = redis.opsForValue().get(soldKey(item));
        return new Stock(item, stock == null ? 0 : Integer.parseInt(stock), sold == null ? 0 : Integer.parseInt(sold));
    }

    private boolean buy(String item) {
        String current = redis.opsForValue().get(stockKey(item));
        int stock = current == null ? 0 : Integer.parseInt(current);
        if (stock <= 0) {
            return false;
        }
        pause(); // payment, say: the window in which an unlocked buyer reads stale stock
        redis.opsForValue().set(stockKey(item), Integer.toString(stock - 1));
        redis.opsForValue().increment(soldKey(item));
        return true;
    }

    private static void pause() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String stockKey(String item) {
        return "sample:stock:" + item;
    }

    private static String soldKey(String item) {
        return "sample:sold:" + item;
    }

    /** Stock left and units sold; {@code sold} above the initial stock means the item was oversold. */
    public record Stock(String item, int stock, int sold) {
    }
}
