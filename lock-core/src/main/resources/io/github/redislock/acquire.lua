-- Acquires an exclusive lock, or registers the caller as a waiter.
-- KEYS[1] the lock (string: owner id), KEYS[2] the fencing counter,
-- KEYS[3] waiting clients by arrival (zset, score = first registration ms),
-- KEYS[4] waiting clients by expiry (zset, score = ms after which the entry is stale), KEYS[5] the lock's abandoned
-- set (see lib/stale.lua)
-- ARGV[1] owner id (client id + thread + acquisition), ARGV[2] lease in ms, ARGV[3] client id,
-- ARGV[4] how long the caller will sleep at most before re-checking, in ms (0 = it will not wait),
-- ARGV[5] fence grace in ms, ARGV[6] '1' if the caller may be registered as a waiter (withdraw it on success),
-- ARGV[7] how many of the longest-waiting clients a turn belongs to (see release.lua)
-- ARGV[8] (optional, not on a Redlock node) '1' when the caller's client takes grants from their message (see
-- release.lua): a miss then also tells the server time it ran at (see Returns)
-- ARGV[9] the attempt's number in its acquisition, ARGV[10] '1' when an earlier attempt of it failed (lib/stale.lua)
-- Redlock nodes only: KEYS[6] the node's restart marker (its value: '<run_id> <ms>', the node process that wrote
-- it and that process's clock in ms before which it grants nothing), ARGV[8] the restart delay in ms
-- Returns the fencing token (> 0) when the caller holds the lock, else minus the lock's remaining TTL in ms (< 0)
-- (-1, changing nothing, for an attempt given up: nobody waits for its reply),
-- or, on a Redlock node sitting out its restart delay, minus (2^40 + the delay's remaining ms). With ARGV[8] '1', a miss
-- answers minus (the TTL, at most 8191, + 8192 * the server time in ms modulo 2^39): a grant to the caller's client
-- made later than that (its message says when) was made after the caller sent this request.
-- A Redlock node may have forgotten locks it granted: without its marker it came back empty (restarted without
-- persistence, flushed) or is new; with a marker another process wrote (another run_id) it restarted, maybe from
-- persisted data (an RDB snapshot, an AOF not fsynced on every write), which holds the marker but not the locks
-- granted after it was written. Either way it grants nothing for the restart delay (the longest lease any client
-- takes), from its start (a restart) or from now (no marker), until every lock it may have held has expired
-- (antirez's delayed restart). The run_id and uptime come from INFO server, read only when the node would grant.
-- Meanwhile the watchdog of a holder whose lease is still valid may put that holder's lock back
-- (redlock-repair-many.lua): that gives the lock to nobody new.
-- A lock whose value is '<client id>:grant:<token>' was granted by a release to that waiting client (release.lua): the
-- client's waiting thread adopts it here, with a new fencing token (a thread of the client may have held it from the
-- grant's message, with the grant's token).
-- A lock whose value is '~turn' was just released while other clients waited: for a short while only the
-- longest-waiting clients may take it, so a contender that did not wait (say the releasing client's next
-- thread) cannot overtake them.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
-- Uses lib/restart.lua.
-- Uses lib/stale.lua.
if given_up(KEYS[5], ARGV[1], ARGV[9], ARGV[10]) then
  return -1
end

local takes_grants = not KEYS[6] and ARGV[8] == '1'

-- On a Redlock node, before it grants: how many ms of its restart delay are left (0: none, or not a Redlock node).
local function delay_left()
  if not KEYS[6] then
    return 0
  end
  return restart_delay_left(KEYS[6], ARGV[8])
end

local function restarting(left)
  return -(1099511627776 + left)
end

local function token_from_clock()
  -- only a Redlock node (it has KEYS[6]) keeps the counter longer than the grace
  return next_fencing_token(redis.call('TIME'), KEYS[2], ARGV[5], KEYS[6] ~= nil)
end

local current = redis.call('GET', KEYS[1])
if current == '~turn' then
  local rank = redis.call('ZRANK', KEYS[3], ARGV[3])
  if rank and rank < tonumber(ARGV[7]) then
    local left = delay_left()
    if left > 0 then
      return restarting(left)
    end
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    withdraw_waiter(KEYS[3], KEYS[4], ARGV[3])
    return token_from_clock()
  end
elseif not current then
  local left = delay_left()
  if left > 0 then
    return restarting(left)
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if ARGV[6] == '1' then
    withdraw_waiter(KEYS[3], KEYS[4], ARGV[3])
  end
  return token_from_clock()
end
if current == ARGV[1] then
  -- our own earlier attempt succeeded but its reply was lost: keep it
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  withdraw_waiter(KEYS[3], KEYS[4], ARGV[3])
  local last = redis.call('GET', KEYS[2])
  if last then
    return tonumber(last)
  end
  return token_from_clock()
end
local granted = ARGV[3] .. ':grant:'
if string.sub(current, 1, #granted) == granted then
  -- granted to the caller's client: the caller is its waiting thread (the one thread of the client that asks). A
  -- token of its own, not the grant's: another thread of the client may have held the grant from its message with the
  -- grant's token, and its release not have reached Redis (a broken connection)
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  withdraw_waiter(KEYS[3], KEYS[4], ARGV[3])
  return token_from_clock()
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  -- no expiry: the key was not set by this library; re-check now and then rather than spin
  ttl = 1000
elseif ttl < 1 then
  ttl = 1
end
local sleep = tonumber(ARGV[4])
local nowMs
if sleep > 0 or takes_grants then
  local now = redis.call('TIME')
  nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
if sleep > 0 then
  -- the entry lives until the caller's next re-check, plus a second of slack; its arrival time is kept,
  -- so releases wake the longest-waiting clients first
  local entryTtl = math.min(sleep, ttl) + 1000
  register_waiter(KEYS[3], KEYS[4], ARGV[3], nowMs, entryTtl)
end
if takes_grants then
  return -(math.min(ttl, 8191) + 8192 * (nowMs % 549755813888))
end
return -ttl
