-- cart: the record of a hold or order whose lines span several slots of a Redis Cluster (the
-- coordinator of the protocol in docs/holds.md). It lives in the slot of the id; the lines are
-- prepared per slot group by hold-4002.lua under the group ids ID#SLOT#ATTEMPT (a hold's
-- groups held, an order's ordered), and this record is the one place that decides what
-- becomes of them. Each step below is one script run, so two
-- processes (a re-run and reap, say) racing on one id see each decision exactly once.
--
-- KEYS[1]  the record (a string, see "The record" below)
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
-- state (held and ordered need nothing: their groups are held, or ordered, already; a record
-- ordered by the previous version, whose groups were held, is finished by confirming them).
--
-- Every op returns {state, attempt, exp, finished, lines, status, replayed}: the record after
-- the op (state "missing" when there is none: {"missing", 0, 0, 0, "", "missing", 0}, for any
-- op but intent, an unknown one included), and for settle the answer ("ok", "expired",
-- "released" (a confirm of a released hold), "conflict", "missing"; "missing" also for an
-- attempt still preparing or aborted) and whether it repeated an earlier one; for intent,
-- replayed = 1 when the record existed. Other ops answer status "ok".
-- Error replies:
--   STOCKCTL_CONFLICT <kind>    intent: the id is taken by other lines or the other kind
--                               (<kind>: this call's ARGV[3])
--   STOCKCTL_INVALID <what>     "kind" (intent's ARGV[3]), "record <key>" (a record this
--                               script cannot read), "op <op>", "action <action>"; the last
--                               two after a held record past its expiry was saved as expired
--
-- The record, one string (one GET to read it, one SET to write it: a script call costs about
-- as much per command it runs and per element of the replies it reads as for its own Lua):
--   "<state> <attempt> <exp> <deadline> <finished> <kind> <bytes of lines>\n<lines><canon>"
-- It was a hash of those fields before; no release wrote that form, so it is not read (it is
-- "record <key>", as any record this script cannot read).

local rec, due, op, id = KEYS[1], KEYS[2], ARGV[1], ARGV[2]

local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local raw = redis.pcall('GET', rec)
if type(raw) == 'table' then return redis.error_reply('STOCKCTL_INVALID record ' .. rec) end

local state, attempt, exp, deadline, finished, kind, lines, canon, tail
if raw then
  local tail_at, size, at
  state, attempt, exp, deadline, finished, tail_at, kind, size, at =
    string.match(raw, '^(%a+) (%d+) (%d+) (%d+) ([01])() (%a+) (%d+)\n()')
  if not state then return redis.error_reply('STOCKCTL_INVALID record ' .. rec) end
  lines = string.sub(raw, at, at + size - 1)
  canon = string.sub(raw, at + size)
  tail = string.sub(raw, tail_at)  -- " <kind> <bytes of lines>\n<lines><canon>"
end

local function reply(status, replayed)
  if not state then return {'missing', 0, 0, 0, '', status or 'missing', 0} end
  return {state, tonumber(attempt), tonumber(exp), tonumber(finished), lines, status or 'ok',
          replayed or 0}
end

-- Writes the record's new state (its expiry kept).
local function save(new_state, new_finished)
  state, finished = new_state, new_finished
  redis.call('SET', rec, table.concat({state, attempt, exp, deadline, finished}, ' ') .. tail,
             'KEEPTTL')
end

-- The record has something left to finish: reap looks at it from now on.
local function to_finish(new_state, now)
  save(new_state, '0')
  redis.call('ZADD', due, now, id)
end

if op == 'intent' then
  local new_kind, new_canon = ARGV[3], ARGV[4]
  if new_kind ~= 'hold' and new_kind ~= 'order' then
    return redis.error_reply('STOCKCTL_INVALID kind')
  end
  -- An attempt that was aborted and whose groups are all given back is as good as none: the
  -- id may try again (as on one Redis, where a refused attempt is not recorded).
  if state and not (state == 'aborted' and finished == '1') then
    if canon ~= new_canon then
      return redis.error_reply('STOCKCTL_CONFLICT ' .. new_kind)
    end
    return reply('ok', 1)
  end
  local now = server_now()
  local life, budget = tonumber(ARGV[6]), tonumber(ARGV[7])
  local new_exp = new_kind == 'hold' and now + life or 0
  local new_deadline = now + budget
  if new_kind == 'hold' and new_deadline > new_exp then new_deadline = new_exp end
  state, attempt, finished, kind = 'preparing', tostring(tonumber(attempt or '0') + 1), '0', new_kind
  exp, deadline = string.format('%d', new_exp), string.format('%d', new_deadline)
  lines, canon = ARGV[5], new_canon
  local keep = math.max(tonumber(ARGV[8]), math.ceil(math.max(life, budget) / 1000) + 60)
  redis.call('SET', rec, table.concat({state, attempt, exp, deadline, finished, kind, #lines}, ' ')
             .. '\n' .. lines .. canon, 'EX', keep)
  redis.call('ZADD', due, deadline, id)
  return reply('ok', 0)
end

if not state then
  redis.call('ZREM', due, id)
  return reply()
end

if op == 'decide' then
  if state ~= 'preparing' or attempt ~= ARGV[4] then return reply() end
  local now = server_now()
  local outcome = ARGV[3]
  -- Past the deadline reap may be aborting this attempt: commit only before it.
  if outcome == 'commit' and now >= tonumber(deadline) then outcome = 'abort' end
  if outcome == 'commit' and kind == 'hold' then
    save('held', '1')
    redis.call('ZADD', due, exp, id)
  elseif outcome == 'commit' then
    save('ordered', '1')
    redis.call('ZREM', due, id)
  else
    to_finish('aborted', now)
  end
  return reply()
end

if op == 'done' then
  if state == ARGV[3] and attempt == ARGV[4] then
    save(state, '1')
    if state == 'held' then redis.call('ZADD', due, exp, id) else redis.call('ZREM', due, id) end
  end
  return reply()
end

local now = server_now()
-- A hold past its expiry is expired before anything else looks at it (the same comparison
-- as hold-4002.lua and settle-4002.lua: expired when now >= exp).
if state == 'held' and now >= tonumber(exp) then to_finish('expired', now) end

if op == 'reap' then
  if state == 'preparing' and now >= tonumber(deadline) then
    to_finish('aborted', now)
  elseif state == 'held' then
    redis.call('ZADD', due, exp, id)
  elseif state == 'preparing' then
    redis.call('ZADD', due, deadline, id)
  elseif finished == '1' then
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
  if state == 'expired' then return reply('expired', 0) end
  if state == 'released' then return reply('released', 0) end
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
