package io.github.redislock.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code POST /flash-sale/{item}/rush?stock=10&buyers=50&locked=true} restocks the item and lets 50
 * concurrent buyers at it; compare {@code locked=true} (never oversold) with {@code locked=false}.
 */
@RestController
@RequestMapping("/flash-sale/{item}")
public class FlashSaleController {

    private final InventoryService inventory;

    public FlashSaleController(InventoryService inventory) {
        this.inventory = inventory;
    }

    @PostMapping("/restock")
    public InventoryService.Stock restock(@PathVariable String item, @RequestParam(defaultValue = "10") int stock) {
        inventory.restock(item, stock);
        return inventory.stock(item);
    }

    @PostMapping("/buy")
    public Purchase buy(@PathVariable String item, @RequestParam(defaultValue = "true") boolean locked) {
        boolean bought = locked ? inventory.buyWithLock(item) : inventory.buyWithoutLock(item);
        return new Purchase(item, bought);
    }

    @GetMapping
    public InventoryService.Stock stock(@PathVariable String item) {
        return inventory.stock(item);
    }

    @PostMapping("/rush")
    public RushResult rush(@PathVariable String item, @RequestParam(defaultValue = "10") int stock,
            @RequestParam(defaultValue = "50") int buyers, @RequestParam(defaultValue = "true") boolean locked)
            throws Exception {
        if (buyers < 1 || buyers > 10_000 || stock < 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "buyers must be 1 to 10000 and stock at least 0");
        }
        inventory.restock(item, stock);
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(buyers, 64));
        try {
            List<Future<Boolean>> purchases = new ArrayList<>();
            for (int i = 0; i < buyers; i++) {
                purchases.add(pool.submit(() -> locked ? inventory.buyWithLock(item) : inventory.buyWithoutLock(item)));
            }
            int succeeded = 0;
            for (Future<Boolean> purchase : purchases) {
                succeeded += purchase.get() ? 1 : 0;
            }
            InventoryService.Stock after = inventory.stock(item);
            return new RushResult(item, locked, stock, buyers, succeeded, after.sold(), Math.max(0, after.sold() - stock));
        } finally {
            pool.shutdown();
        }
    }

    public record Purchase(String item, boolean bought) {
    }

    public record RushResult(String item, boolean locked, int initialStock, int buyers, int purchasesConfirmed,
            int unitsSold, int oversold) {
    }
}
