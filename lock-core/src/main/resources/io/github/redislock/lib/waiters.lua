-- lib/waiters.lua: the waiting list of every lock type that keeps one. Prepended like lib/fence.lua (see there) to
-- each script whose header has the line "-- Uses lib/waiters.lua.".

-- A lock's waiters are two sorted sets in its hash tag: by arrival (score = first registration in server ms, kept
-- while the waiter refreshes its entry, so a release wakes the longest-waiting first) and by expiry (score = server
-- ms after which the entry is stale: its waiter died, or left without withdrawing). Each key lives as long as its
-- longest entry.

-- Enters waiter, or refreshes its entry, until now_ms + entry_ttl, keeping its arrival time.
local function register_waiter(by_arrival, by_expiry, waiter, now_ms, entry_ttl)
  redis.call('ZADD', by_arrival, 'NX', now_ms, waiter)
  redis.call('ZADD', by_expiry, now_ms + entry_ttl, waiter)
  for _, list in ipairs({by_arrival, by_expiry}) do
    if redis.call('PTTL', list) < entry_ttl then
      redis.call('PEXPIRE', list, entry_ttl)
    end
  end
end

-- Takes waiter off the list: it got what it waited for, or gave up.
local function withdraw_waiter(by_arrival, by_expiry, waiter)
  redis.call('ZREM', by_arrival, waiter)
  redis.call('ZREM', by_expiry, waiter)
end

-- Drops waiters whose entries went stale by now_ms (at most 100 a call, so a call's cost stays bounded); how many.
local function prune_stale_waiters(by_arrival, by_expiry, now_ms)
  local stale = redis.call('ZRANGEBYSCORE', by_expiry, '-inf', now_ms, 'LIMIT', '0', '100')
  for _, waiter in ipairs(stale) do
    withdraw_waiter(by_arrival, by_expiry, waiter)
  end
  return #stale
end
