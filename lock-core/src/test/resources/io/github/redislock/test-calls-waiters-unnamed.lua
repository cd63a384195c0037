-- A script for LockScriptsTest: calls a function of lib/waiters.lua without naming the library in its header.
-- Uses lib/fence.lua.
withdraw_waiter(KEYS[1], KEYS[2], ARGV[1])
return 1
