-- lib/restart.lua: a Redlock node's restart delay, for acquire.lua and redlock-repair-many.lua. Prepended like
-- lib/fence.lua (see there) to each script whose header has the line "-- Uses lib/restart.lua.".

-- How many ms of the node's restart delay are left (0: none), read and kept in its restart marker, before it grants.
-- The marker's value is '<run_id> <ms>': the node process that wrote it and that process's clock in ms before which
-- it grants nothing. Without a marker the delay runs from now; with one another process wrote, from the start of
-- this process (see acquire.lua).
-- marker_key: the node's restart marker; delay_ms: the restart delay in ms
local function restart_delay_left(marker_key, delay_ms)
  local now = redis.call('TIME')
  local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local info = redis.call('INFO', 'server')
  local runId = string.match(info, 'run_id:(%x+)')
  local marker = redis.call('GET', marker_key)
  local notBefore
  if not marker then
    notBefore = nowMs + tonumber(delay_ms)
  else
    local markedRun, markedNotBefore = string.match(marker, '^(%x+) (%-?%d+)$')
    if not markedRun then
      markedNotBefore = marker -- written before markers named their process
    end
    notBefore = tonumber(markedNotBefore) or 0
    if markedRun ~= runId then
      -- uptime_in_seconds is the difference of two whole seconds (the clock and the start, each rounded down), so it
      -- can be up to a second more than the real uptime: counted from a second later, this start is no earlier than
      -- the real one, and the delay is never cut short (it may run up to a second longer)
      local started = nowMs - (tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) - 1) * 1000
      notBefore = math.max(notBefore, started + tonumber(delay_ms))
    end
  end
  local value = runId .. ' ' .. string.format('%d', notBefore)
  if value ~= marker then
    redis.call('SET', marker_key, value)
  end
  if nowMs < notBefore then
    return notBefore - nowMs
  end
  return 0
end
