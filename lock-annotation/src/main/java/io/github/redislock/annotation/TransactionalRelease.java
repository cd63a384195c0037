package io.github.redislock.annotation;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** Defers a release to the end of the surrounding transaction; only loaded when spring-tx is present. */
final class TransactionalRelease {

    private static final Logger log = LoggerFactory.getLogger(TransactionalRelease.class);

    private TransactionalRelease() {
    }

    /**
     * When the locked method ran inside an outer transaction, its writes are only visible once that
     * transaction commits: keep the lock until it completes.
     *
     * @param what names the method and its keys for the log
     * @return whether the release was deferred
     */
    static boolean deferToOuterTransaction(Runnable release, String what) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()
                || !TransactionSynchronizationManager.isActualTransactionActive()) {
            return false;
        }
        Thread acquiring = Thread.currentThread();
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public int getOrder() {
                return LOWEST_PRECEDENCE; // after the resources are committed or rolled back
            }

            @Override
            public void afterCompletion(int status) {
                if (Thread.currentThread() != acquiring) {
                    // a transaction manager that completes on another thread (a JTA timeout, say): the
                    // engine only accepts releases from the acquiring thread
                    log.error("The transaction around {} completed on thread '{}', not on '{}' that took the lock; "
                            + "the lock cannot be released from here and stays held (renewed by the watchdog) until "
                            + "the application stops", what, Thread.currentThread().getName(), acquiring.getName());
                    return;
                }
                try {
                    release.run();
                } catch (RuntimeException e) {
                    log.warn("Releasing the lock of {} after its transaction completed failed: {}", what, e.getMessage(), e);
                }
            }
        });
        return true;
    }
}
