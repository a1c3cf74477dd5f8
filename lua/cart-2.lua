-- cart: the record of a hold or order whose lines span several slots of a Redis Cluster (the
-- coordinator of the protocol in docs/holds.md). It lives in the slot of the id; the lines are
-- held per slot group by hold-4002.lua under the group ids ID#SLOT#ATTEMPT, and this record is
-- the one place that decides what becomes of them. Each step below is one script run, so two
-- processes (a re-run and reap, say) racing on one id see each decision exactly once.
--
-- KEYS[1]  the record (a hash: kind, canon, lines, state, attempt, exp, deadline, finished)
-- KEYS[2]  the due index of the record's slot (a sorted set: id -> server time in ms at which
--          reap should look at the record; absent = nothing left to do)
-- ARGV[1]  op: "intent", "decide", "settle", "reap" or "done"
-- ARGV[2]  the id
-- intent:  ARGV[3] kind ("hold" or "order"), ARGV[4] the canonical text of the merged lines,
--          ARGV[5] the lines as the caller encodes them (kept verbatim), ARGV[6] hold: its
--          life in ms, ARGV[7] how long preparing may take, in ms, ARGV[8] how long the record
--          is remembered, in seconds
-- decide:  ARGV[3] "commit" or "abort", ARGV[4] the attempt the caller prepared
-- settle:  ARGV[3] "confirm", "release" or "cancel"
-- done:    ARGV[3] the state the caller finished the groups for, ARGV[4] its attempt
--
-- States: preparing -> held (hold) | ordered (order) | aborted; held -> confirmed | released |
-- expired; confirmed, ordered -> cancelled. "finished" = 1 once every group was driven to the
-- state (held needs nothing: its groups are held already).
--
-- Every op returns {state, attempt, exp, finished, lines, status, replayed}: the record after
-- the op (state "missing" when there is none), and for settle the answer ("ok", "expired",
-- "conflict", "missing") and whether it repeated an earlier one; for intent, replayed = 1 when
-- the record existed. Error reply: STOCKCTL_CONFLICT <kind> (intent: the id is taken by other
-- lines or the other kind), STOCKCTL_INVALID <what>.

local rec, due, op, id = KEYS[1], KEYS[2], ARGV[1], ARGV[2]

local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function reply(status, replayed)
  local r = redis.call('HMGET', rec, 'state', 'attempt', 'exp', 'finished', 'lines')
  if not r[1] then return {'missing', 0, 0, 0, '', status or 'missing', 0} end
  return {r[1], tonumber(r[2]), tonumber(r[3]), tonumber(r[4]), r[5], status or 'ok',
          replayed or 0}
end

-- The record has something left to finish: reap looks at it from now on.
local function to_finish(state, now)
  redis.call('HSET', rec, 'state', state, 'finished', 0)
  redis.call('ZADD', due, now, id)
end

if op == 'intent' then
  local kind, canon = ARGV[3], ARGV[4]
  if kind ~= 'hold' and kind ~= 'order' then return redis.error_reply('STOCKCTL_INVALID kind') end
  local r = redis.call('HMGET', rec, 'canon', 'state', 'attempt', 'finished')
  -- An attempt that was aborted and whose groups are all given back is as good as none: the
  -- id may try again (as on one Redis, where a refused attempt is not recorded).
  if r[1] and not (r[2] == 'aborted' and r[4] == '1') then
    if r[1] ~= canon then return redis.error_reply('STOCKCTL_CONFLICT ' .. kind) end
    return reply('ok', 1)
  end
  local now = server_now()
  local life, budget = tonumber(ARGV[6]), tonumber(ARGV[7])
  local exp = kind == 'hold' and now + life or 0
  local deadline = now + budget
  if kind == 'hold' and deadline > exp then deadline = exp end
  redis.call('HSET', rec, 'kind', kind, 'canon', canon, 'lines', ARGV[5], 'state', 'preparing',
             'attempt', tonumber(r[3] or '0') + 1, 'exp', exp, 'deadline', deadline,
             'finished', 0)
  local keep = math.max(tonumber(ARGV[8]), math.ceil(math.max(life, budget) / 1000) + 60)
  redis.call('EXPIRE', rec, keep)
  redis.call('ZADD', due, deadline, id)
  return reply('ok', 0)
end

local r = redis.call('HMGET', rec, 'state', 'attempt', 'exp', 'deadline', 'kind', 'finished')
local state, attempt, exp, deadline, kind = r[1], r[2], tonumber(r[3]), tonumber(r[4]), r[5]
if not state then
  redis.call('ZREM', due, id)
  return reply()
end

if op == 'decide' then
  if state ~= 'preparing' or attempt ~= ARGV[4] then return reply() end
  local now = server_now()
  local outcome = ARGV[3]
  -- Past the deadline reap may be aborting this attempt: commit only before it.
  if outcome == 'commit' and now >= deadline then outcome = 'abort' end
  if outcome == 'commit' and kind == 'hold' then
    redis.call('HSET', rec, 'state', 'held', 'finished', 1)
    redis.call('ZADD', due, exp, id)
  elseif outcome == 'commit' then
    to_finish('ordered', now)
  else
    to_finish('aborted', now)
  end
  return reply()
end

if op == 'done' then
  if state == ARGV[3] and attempt == ARGV[4] then
    redis.call('HSET', rec, 'finished', 1)
    if state == 'held' then redis.call('ZADD', due, exp, id) else redis.call('ZREM', due, id) end
  end
  return reply()
end

local now = server_now()
-- A hold past its expiry is expired before anything else looks at it (the same comparison
-- as hold-4002.lua and settle-4002.lua: expired when now >= exp).
if state == 'held' and now >= exp then
  state = 'expired'
  to_finish(state, now)
end

if op == 'reap' then
  if state == 'preparing' and now >= deadline then
    to_finish('aborted', now)
  elseif state == 'held' then
    redis.call('ZADD', due, exp, id)
  elseif state == 'preparing' then
    redis.call('ZADD', due, deadline, id)
  elseif r[6] == '1' then
    redis.call('ZREM', due, id)
  end
  return reply()
end

if op ~= 'settle' then return redis.error_reply('STOCKCTL_INVALID op ' .. tostring(op)) end
local action = ARGV[3]
-- An attempt still preparing or aborted never held anything the caller could act on.
if state == 'preparing' or state == 'aborted' then return reply('missing', 0) end
if action == 'confirm' then
  if state == 'held' then
    to_finish('confirmed', now)
    return reply('ok', 0)
  end
  if state == 'confirmed' then return reply('ok', 1) end
  if state == 'expired' or state == 'released' then return reply('expired', 0) end
  return reply('conflict', 0)
elseif action == 'release' or action == 'cancel' then
  if state == 'held' then
    to_finish('released', now)
    return reply('ok', 0)
  end
  if state == 'released' then return reply('ok', 1) end
  if state == 'expired' then return reply('expired', 0) end
  if action == 'cancel' and (state == 'confirmed' or state == 'ordered') then
    to_finish('cancelled', now)
    return reply('ok', 0)
  end
  if action == 'cancel' and state == 'cancelled' then return reply('ok', 1) end
  return reply('conflict', 0)
end
return redis.error_reply('STOCKCTL_INVALID action ' .. tostring(action))
