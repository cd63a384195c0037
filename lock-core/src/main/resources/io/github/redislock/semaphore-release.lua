-- Returns a holder's permits to a semaphore and wakes the threads that have waited longest for permits, or hands
-- the permits straight to the next thread of the same client that waits for them.
-- KEYS[1] holders (zset: holder id -> lease end ms), KEYS[2] permits per holder (hash),
-- KEYS[3] waiting threads by arrival, KEYS[4] waiting threads by expiry, KEYS[5] the permit limit,
-- KEYS[6] the fencing counter
-- ARGV[1] holder id, ARGV[2] wake-up channel prefix, ARGV[3] the name waiting clients know the semaphore by,
-- ARGV[4] how many waiting threads to wake,
-- ARGV[5] the holder id of the releasing client's next waiting thread, to hand the permits to ('' = none),
-- ARGV[6] the permits it wants, ARGV[7] its lease in ms, ARGV[8] fence grace in ms,
-- ARGV[9] the releasing client's waiter id (client id + ':queue'), ARGV[10] '1' when more of its threads wait after
-- that one, ARGV[11] how long their waiter entry lives, in ms, ARGV[12] how long a stored limit is kept unused, in ms
-- Returns, without a hand-over, 1 when the holder's permits were returned and 0 when it held none any more (its lease
-- had ended, or Redis lost them), plus 2 when more threads wait than were woken; the waiters are woken either way,
-- since permits may be free now. With a hand-over, (2 * the new holder's fencing token + 1 if no permit is left
-- free), negated when the releasing holder held none any more.
-- The woken waiters may have died or left (their entries live on until they go stale): when some were not woken,
-- the caller looks a turn's time later whether permits are still free, and if so wakes every client still waiting
-- (semaphore-look.lua), so dead clients ahead in the queue do not strand a live one until its next look. (A hand-over
-- that leaves permits free cannot say whether it woke everybody: the caller looks after it too.)
-- A hand-over keeps remote waiters' places: it happens only while no other client's thread has waited longer than
-- the releasing client's (by their waiter entries' arrival), and the releasing client's entry, if its threads still
-- wait, goes to the back of the queue, so a waiting client is never passed over twice in a row by a release.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
-- Uses lib/keep.lua.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
local held = 0
if expiry and tonumber(expiry) > nowMs then
  held = 1
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])

-- no waiting list (nobody waits): nothing to prune, and nobody to wake below
local waiting = redis.call('EXISTS', KEYS[3]) == 1
if waiting then
  prune_stale_waiters(KEYS[3], KEYS[4], nowMs)
end

local function hand_over()
  local first = redis.call('ZRANGE', KEYS[3], '0', '0')
  if first[1] and first[1] ~= ARGV[9] then
    return nil -- another client waited longer: it keeps its place
  end
  local limit = redis.call('GET', KEYS[5])
  if not limit then
    return nil
  end
  limit = tonumber(limit)
  -- holders whose lease ended hold nothing (a release without a hand-over leaves them to the next acquisition)
  for _, holder in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs)) do
    redis.call('ZREM', KEYS[1], holder)
    redis.call('HDEL', KEYS[2], holder)
  end
  local holding = 0
  for _, permits in ipairs(redis.call('HVALS', KEYS[2])) do
    holding = holding + tonumber(permits)
  end
  local wanted = tonumber(ARGV[6])
  if redis.call('HEXISTS', KEYS[2], ARGV[5]) == 1 or holding + wanted > limit then
    return nil
  end
  local lease = tonumber(ARGV[7])
  redis.call('ZADD', KEYS[1], nowMs + lease, ARGV[5])
  redis.call('HSET', KEYS[2], ARGV[5], ARGV[6])
  -- the holders and their permits are written, emptied and kept alive together by every script, so their TTLs are
  -- equal: one check serves both (a command less in every hand-over; Redis is what a busy semaphore waits for)
  keep_for(KEYS[1], ARGV[7], KEYS[2])
  keep_for(KEYS[5], longer_arg(ARGV[7], ARGV[12]))
  if ARGV[10] == '1' then
    -- its other threads still wait: the client waits on, from the back of the queue
    redis.call('ZADD', KEYS[3], nowMs, ARGV[9])
    redis.call('ZADD', KEYS[4], nowMs + tonumber(ARGV[11]), ARGV[9])
    keep_for(KEYS[3], ARGV[11], KEYS[4]) -- the waiting lists too (lib/waiters.lua keeps them as one)
  else
    withdraw_waiter(KEYS[3], KEYS[4], ARGV[9])
  end
  local full = 0
  if holding + wanted >= limit then
    full = 1
  end
  return next_fencing_token(now, KEYS[6], ARGV[8], false) * 2 + full, full -- no semaphore runs on a Redlock node
end

local handed, full
if ARGV[5] and ARGV[5] ~= '' then
  handed, full = hand_over()
  if handed and ARGV[10] == '1' then
    waiting = true -- the hand-over put the releasing client's entry in the waiting list
  end
end
if handed and full == 1 then
  -- nothing is left free: no other waiter could enter now
  if held == 1 then
    return handed
  end
  return -handed
end

-- a waiter id is '<client id>:<thread>' or '<client id>:queue': one message per client reaches all its waiting threads
local told = {}
local woken = tonumber(ARGV[4])
if waiting then
  for _, waiter in ipairs(redis.call('ZRANGE', KEYS[3], 0, woken - 1)) do
    local client = string.match(waiter, '^[^:]+')
    if not told[client] then
      told[client] = true
      redis.call('PUBLISH', ARGV[2] .. client, ARGV[3])
    end
  end
end
if handed then
  if held == 1 then
    return handed
  end
  return -handed
end
if waiting and redis.call('ZCARD', KEYS[3]) > woken then
  return held + 2
end
return held
