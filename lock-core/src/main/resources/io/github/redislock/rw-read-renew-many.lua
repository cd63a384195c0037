-- Extends the leases of many read shares in one call (the watchdog's batch), each as rw-renew.lua does a read share:
-- never shortened.
-- KEYS[3i-2] the i-th share's readers (zset: owner -> lease end ms), KEYS[3i-1] its read epoch token, KEYS[3i] its
-- writers waiting, as in rw-read-acquire.lua (in Redis Cluster all in one hash slot)
-- ARGV[i] the i-th share's owner id, ARGV[#KEYS / 3 + 1] the lease in ms of them all (the watchdog batches holdings
-- of one lease)
-- Returns a string of one character per share, in order: '1' when the owner still reads (its lease now at least
-- the lease), '2' when it does and a writer waits (its client then stops letting threads join the share), '0' when
-- its share is gone (its lease ended, or Redis lost it).
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortens' in the
-- same call; before, PTTL is asked first.
local gt = redis.REDIS_VERSION_NUM ~= nil
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local n = #KEYS / 3
local leaseArg = ARGV[n + 1]
local lease = tonumber(leaseArg)
local held = {}
for i = 1, n do
  local readers, epoch, writers = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local owner = ARGV[i]
  local expiry = redis.call('ZSCORE', readers, owner)
  if not expiry or tonumber(expiry) <= nowMs then
    redis.call('ZREM', readers, owner)
    held[i] = '0'
  else
    if tonumber(expiry) < nowMs + lease then
      redis.call('ZADD', readers, 'XX', nowMs + lease, owner)
    end
    -- the readers and the epoch live as long as the longest reader lease
    for _, key in ipairs({readers, epoch}) do
      if gt then
        redis.call('PEXPIRE', key, leaseArg, 'GT')
      elseif redis.call('PTTL', key) < lease then
        redis.call('PEXPIRE', key, leaseArg)
      end
    end
    held[i] = '1'
    redis.call('ZREMRANGEBYSCORE', writers, '-inf', nowMs)
    if redis.call('ZCARD', writers) > 0 then
      held[i] = '2'
    end
  end
end
return table.concat(held)
