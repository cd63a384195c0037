-- Extends the leases of many semaphore holders' permits in one call (the watchdog's batch), each as
-- semaphore-renew.lua does one: never shortened.
-- KEYS[3i-2] the i-th semaphore's holders (zset: holder id -> lease end ms), KEYS[3i-1] its permits per holder
-- (hash), KEYS[3i] its permit limit (in Redis Cluster all in one hash slot)
-- ARGV[1] how long a stored limit is kept unused, in ms; ARGV[i + 1] the i-th holder id; ARGV[#KEYS / 3 + 2] the
-- lease in ms of them all (the watchdog batches holdings of one lease)
-- Returns a string of one character per holder, in order: '1' when it still has its permits (its lease now at least
-- the lease), '0' when not (its lease ended, or Redis lost them).
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortens' in the
-- same call; before, PTTL is asked first.
-- Uses lib/keep.lua.
local gt = redis.REDIS_VERSION_NUM ~= nil
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local n = #KEYS / 3
local leaseArg = ARGV[n + 2]
local lease = tonumber(leaseArg)
local keep = longer_arg(leaseArg, ARGV[1])
local held = {}
for i = 1, n do
  local holders, permits, limit = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local holder = ARGV[i + 1]
  local expiry = redis.call('ZSCORE', holders, holder)
  if not expiry or tonumber(expiry) <= nowMs then
    held[i] = '0'
  else
    if tonumber(expiry) < nowMs + lease then
      redis.call('ZADD', holders, nowMs + lease, holder)
    end
    for _, key in ipairs({holders, permits}) do
      if gt then
        redis.call('PEXPIRE', key, leaseArg, 'GT')
      else
        keep_for(key, leaseArg)
      end
    end
    if gt then
      redis.call('PEXPIRE', limit, keep, 'GT')
    else
      keep_for(limit, keep)
    end
    held[i] = '1'
  end
end
return table.concat(held)
