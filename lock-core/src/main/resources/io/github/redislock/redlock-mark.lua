-- Marks a Redlock node of a new deployment as remembering its locks, so that it grants at once: sets its restart
-- marker (see acquire.lua) to this node process's run_id and no delay, unless it has one (another client's
-- acquisition may have started the node's delay meanwhile, which it keeps).
-- KEYS[1] the restart marker
-- Returns 1 when marked, 0 when the node had a marker.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
redis.call('SET', KEYS[1], runId .. ' 0')
return 1
