-- Releases a lock held by the caller and grants it to the client that has waited longest (or wakes the clients that
-- have waited longest for it); or, when the caller's client has another thread queued for the lock and no other client
-- waits, hands it straight to that thread.
-- KEYS[1] the lock, KEYS[2] the fencing counter, KEYS[3] waiting clients by arrival, KEYS[4] waiting clients by expiry
-- ARGV[1] owner id, ARGV[2] wake-up channel prefix, ARGV[3] the lock's name as clients know it,
-- ARGV[4] how many waiting clients to wake,
-- ARGV[5] (optional) owner id for the next holder of the caller's client, ARGV[6] its lease in ms,
-- ARGV[7] fence grace in ms (also for a grant), ARGV[8] the caller's client id
-- ARGV[9] (optional, with ARGV[5..8] or alone after empty ones) how long the woken clients' turn lasts, in ms
-- ARGV[10] (optional) how long a grant to the longest-waiting client lasts unless its client confirms it, in ms: given
--         (not empty), the release grants the lock rather than wake clients for a turn (see below)
-- ARGV[11] (optional, with ARGV[5..10]) how many fencing tokens to reserve for the caller's client when handing over:
--         the next holder's token and the ones after it, which the client's next threads may take in turn while
--         it keeps the lock (the counter is set to the last of them, so every later token is higher)
-- ARGV[12] (optional, with ARGV[5..11]) how long the caller's next thread sleeps before it asks, in ms: when other
--         clients wait (no hand-over), the caller's client is registered as waiting behind them, its entry living that
--         long plus a second, so the next thread need not ask Redis only to be told to wait
-- Returns 1 when released, 2 when released and kept for the woken clients' turn (with ARGV[9]) or granted (with
-- ARGV[10]), 0 when the caller did not hold the lock (expired or taken over; nothing changes), the next holder's
-- fencing token (a server-clock value, far above 2) when handed over, or minus 1 or 2 (released; kept for the turn or
-- granted) when it also registered the caller's client as waiting (with ARGV[12]); with ARGV[10] as well, minus (1 or 2
-- + 4 * the server time in ms modulo 2^39).
-- When other clients wait, the lock is not left free but marked '~turn' for a short while: only the woken
-- (longest-waiting) clients may take it then (acquire.lua), so waiting clients come first. A woken client may have
-- died or left (its entry lives on until it goes stale): when the turn ends unused, the releasing client wakes every
-- client still waiting (turn-ended.lua), so a dead client costs the turn, not a live waiter's sleep.
-- With ARGV[10], the lock is instead granted to the longest-waiting client: set to '<client id>:grant:<token>' for
-- ARGV[10] ms, and the grant published to that client alone, as '\4<token>\4<server ms modulo 2^39>\4<lock name>'.
-- Its waiting thread holds the lock from that message, without asking, if the grant was made after that thread's
-- latest request that missed (acquire.lua's reply tells when it ran), and confirms it in the background (renew.lua
-- with that owner id); or it asks, and acquire.lua adopts the grant. A grant nobody confirms expires, and the
-- releasing client's look at the grant's end (the reply is 2) wakes every client still waiting.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local handing_over = ARGV[5] and ARGV[5] ~= ''
-- nobody waits (the uncontended case): no clock, no waiting list to look at
local waiting = redis.call('EXISTS', KEYS[3]) == 1
local now, nowMs
if waiting or handing_over then
  now = redis.call('TIME')
  nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
if waiting then
  -- a client whose entry went stale waits no more: it must neither keep the lock from the caller's next thread nor
  -- be given the turn
  if prune_stale_waiters(KEYS[3], KEYS[4], nowMs) > 0 then
    waiting = redis.call('EXISTS', KEYS[3]) == 1
  end
end
local others = 0
if handing_over then
  if waiting then
    others = redis.call('ZCARD', KEYS[3])
    if redis.call('ZSCORE', KEYS[3], ARGV[8]) then
      others = others - 1
    end
  end
  if others == 0 then
    redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[6])
    -- a new holder gets a new token
    local token = next_fencing_token(now, KEYS[2], ARGV[7])
    local reserved = tonumber(ARGV[11] or '1')
    if reserved > 1 then
      -- the TTL next_fencing_token gave it: never shorter than a longer-lived counter's
      redis.call('SET', KEYS[2], string.format('%d', token + reserved - 1), 'PX', redis.call('PTTL', KEYS[2]))
    end
    return token
  end
end
redis.call('DEL', KEYS[1])
local released = 1
local grants = ARGV[10] and ARGV[10] ~= ''
if waiting then
  if grants then
    local grantee = redis.call('ZRANGE', KEYS[3], '0', '0')[1]
    local token = string.format('%d', next_fencing_token(now, KEYS[2], ARGV[7]))
    redis.call('SET', KEYS[1], grantee .. ':grant:' .. token, 'PX', ARGV[10])
    withdraw_waiter(KEYS[3], KEYS[4], grantee)
    redis.call('PUBLISH', ARGV[2] .. grantee, '\4' .. token .. '\4' .. string.format('%d', nowMs % 549755813888)
      .. '\4' .. ARGV[3])
    released = 2
  else
    -- the next contenders, not every waiter: threads queue in their own JVM, and the longest-waiting
    -- clients go first (more than one, so a client that just left or died cannot stall the hand-off)
    local woken = redis.call('ZRANGE', KEYS[3], 0, tonumber(ARGV[4]) - 1)
    for _, client in ipairs(woken) do
      redis.call('PUBLISH', ARGV[2] .. client, ARGV[3])
    end
    if #woken > 0 and ARGV[9] then
      redis.call('SET', KEYS[1], '~turn', 'PX', ARGV[9])
      released = 2
    end
  end
end
if others > 0 and ARGV[12] then
  -- behind the clients just woken, as if the next thread had asked now
  register_waiter(KEYS[3], KEYS[4], ARGV[8], nowMs, tonumber(ARGV[12]) + 1000)
  if grants then
    -- and when, as a miss tells it (acquire.lua): a grant to the caller's client made later came after this release
    return -(released + 4 * (nowMs % 549755813888))
  end
  return -released
end
return released
