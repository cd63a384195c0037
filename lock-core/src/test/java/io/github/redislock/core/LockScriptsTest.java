package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.util.List;

import org.junit.jupiter.api.Test;

/** How the Lua scripts are put together from their files and the libraries their headers name (pure text). */
class LockScriptsTest {

    @Test
    void aScriptGetsEachLibraryItsHeaderNamesOnceAfterTheHeader() {
        String script = LockScripts.ACQUIRE.getScriptAsString();

        assertThat(script).startsWith("-- Acquires an exclusive lock");
        int headerEnd = script.indexOf("-- Uses lib/waiters.lua.\n") + "-- Uses lib/waiters.lua.\n".length();
        assertThat(script.indexOf("local function next_fencing_token")).isGreaterThan(headerEnd);
        assertThat(script.indexOf("local function register_waiter")).isGreaterThan(script.indexOf("local function next_fencing_token"));
        assertThat(script.indexOf("local function register_waiter")).isLessThan(script.indexOf("local takes_grants = "));
        assertThat(script.split("local function register_waiter", -1)).hasSize(2);
    }

    @Test
    void aScriptThatNamesNoLibraryGetsNone() {
        assertThat(LockScripts.RENEW.getScriptAsString()).doesNotContain("local function");
    }

    @Test
    void everyScriptThatRegistersWithdrawsOrPrunesWaitersHasTheWaitersLibrary() {
        List<String> scripts = List.of(LockScripts.ACQUIRE.getScriptAsString(), LockScripts.RELEASE.getScriptAsString(),
                LockScripts.RW_READ_ACQUIRE.getScriptAsString(), LockScripts.RW_WRITE_ACQUIRE.getScriptAsString(),
                LockScripts.RW_RELEASE.getScriptAsString(), SemaphoreScripts.ACQUIRE.getScriptAsString(),
                SemaphoreScripts.RELEASE.getScriptAsString(), FairLockScripts.FAIR_ACQUIRE.getScriptAsString(),
                FairLockScripts.FAIR_RELEASE.getScriptAsString());
        assertThat(scripts).allSatisfy(script -> assertThat(script).contains("local function prune_stale_waiters"));
    }

    @Test
    void aScriptCallingALibraryFunctionWithoutNamingTheLibraryIsRefusedNamingBoth() {
        assertThatIllegalStateException().isThrownBy(() -> LockScripts.load("test-calls-waiters-unnamed"))
                .withMessageContaining("test-calls-waiters-unnamed.lua calls withdraw_waiter")
                .withMessageContaining("-- Uses lib/waiters.lua.");
    }
}
