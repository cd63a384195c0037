-- The sample's fenced storage: accepts a write only with a token at least as high as any accepted before.
-- KEYS[1] the account (hash: balance, token)
-- ARGV[1] the writer's fencing token, ARGV[2] the new balance
-- Returns 1 when written, 0 when refused as stale.
local highest = tonumber(redis.call('HGET', KEYS[1], 'token') or '0')
if tonumber(ARGV[1]) < highest then
  return 0
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'balance', ARGV[2])
return 1
