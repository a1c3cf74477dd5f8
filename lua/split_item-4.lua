-- split_item: the steps of a split or merge that change an item's stock key (docs/split.md,
-- "States of a split or merge"). While an item is split its stock key holds a layout record
-- instead of a number: "stockctl:split:1 <state> <gen> <tags> <units> <from-gen> <from-tags>"
-- ("-" for a word that does not apply; <tags>: the buckets' hash tags, comma separated). Each op checks the state it expects first, so each
-- step happens once whichever process takes it; a caller that finds another state reads the
-- item again and plans anew (src/core/split_plan.cpp).
--
-- KEYS[1]  the item's stock key
-- KEYS[2]  its holds (sorted set: hold id -> expiry ms), as hold-4002 writes them
-- KEYS[3]  its held units (hash: hold id -> qty, "" -> their sum)
-- KEYS[4]  its change log (a list; lua/include/log_entry.lua); read only with ARGV[5]
-- ARGV[1]  op: "begin", "drained", "commit", "rebalanced" or "keep_log"
-- ARGV[2]  what the caller read: for begin "plain" (the stock key holds a number) or the live
--          layout record; for drained and commit the record itself; rebalanced: the request id
--          of the deduction that moved the units, or "" (rebalance)
-- ARGV[3]  begin: the new layout's generation ("-": merge into one key); drained: the units
--          the drained buckets hold together; rebalanced: the units moved
-- ARGV[4]  begin: the new layout's bucket hash tags, comma separated ("-": merge);
--          rebalanced: the item's total after the moves ("" when it could not be read)
-- ARGV[5]  change log: keep about this many entries; "" = write no log
-- ARGV[6]  change log: actor
-- ARGV[7]  change log: reason ("" = none)
-- ARGV[8..] keep_log: the entries of a bucket's log, as its list holds them (ARGV[2]: the
--          bucket's key)
-- KEYS[5]  keep_log only: the buckets whose logs were copied (a set, <stock key>:kept-logs)
--
-- Ops:
--   begin    a number V -> "fill <gen> <tags> V - -": the units are in the record, the new
--            buckets are created next. The item's expired holds are given back first; an
--            item with holds left, with an expiry, unlimited or corrupt is refused. A live
--            layout -> "drain <gen> <tags> - <old gen> <old tags>": its buckets are drained
--            next.
--   drained  "drain ..." -> "fill <gen> <tags> <ARGV[3]> <old gen> <old tags>": the units of
--            the drained buckets are in the record; the old buckets are deleted next.
--   commit   "fill <gen> <tags> <units> ..." -> "live <gen> <tags> - - -", or, for a merge,
--            the number <units> itself. Logs a "split" or "merge" entry.
--   keep_log the entries ARGV[8..] (the log of bucket ARGV[2], about to be deleted) join the
--            item's list, by time, once per bucket, the list trimmed to the newest ARGV[5]:
--            {"ok", <entries kept>} or {"ok", "copied before"}.
--   rebalanced  logs a "rebalance" entry (qty: the units moved between buckets; before and
--            after: the total; request: ARGV[2]) on the key whatever it holds; changes nothing
--            else.
--
-- Replies: {status, value}:
--   {"ok", <the stock key's new value>}
--   {"changed", <the value found>}   not the state the caller read; nothing changed
--   {"missing", false}               no stock key
--   {"corrupt", <value>}             begin: the value is not a stock value
--   {"unlimited", "-1"}              begin: unlimited stock is not split
--   {"held", <units>}                begin: the item has holds that are not settled
--   {"expires", <ms>}                begin: the stock key has an expiry
-- A begin that gave expired holds back and could not log it (another type where the change
-- log is) adds "log_lost", <the log's key> after any of these; the step itself was taken.
-- Error replies: STOCKCTL_INVALID <what>: "op <op>", "layout <gen> <tags>", "moved <k>",
-- "total <t>", "log <max>".
local POSITIVE = '^[1-9]%d*$'
local MAX = 9007199254740991
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false
local find, match = string.find, string.match

local key, op, expected = KEYS[1], ARGV[1], ARGV[2]
local log_max, actor, reason = ARGV[5], ARGV[6] or '', ARGV[7] or ''
local logging = log_max and log_max ~= ''

local OPS = {begin = true, drained = true, commit = true, rebalanced = true, keep_log = true}
if not OPS[op] then
  return redis.error_reply('STOCKCTL_INVALID op ' .. tostring(op))
end

-- An item's expired holds give their units back before a split reads its stock
-- (lua/include/give_back_expired.lua), as every script that touches an item does.
if op == 'begin' and expected == 'plain' and redis.call('EXISTS', KEYS[2]) == 1 then
  local stock_key, holds_key, held_key = key, KEYS[2], KEYS[3]
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local ids = redis.call('ZRANGEBYSCORE', holds_key, '-inf', now)
  if #ids > 0 then
    local log_key = logging and KEYS[4]
    -- @include give_back_expired
  end
end

if op == 'keep_log' then
  -- The entries of a bucket about to be deleted (ARGV[2]: its key) join the item's own list,
  -- merged by time and trimmed to the newest ARGV[5]. KEYS[5] remembers which buckets were
  -- copied (a day): a run cut off between this copy and the bucket's deletion copies nothing
  -- twice. (Entries are not compared: two buckets can log the same change in the same
  -- millisecond.) The copies are numbered on from the list's highest number: ids stay unique.
  local keep = tonumber(log_max)
  if not keep or keep < 1 then
    return redis.error_reply('STOCKCTL_INVALID log ' .. tostring(log_max))
  end
  if redis.call('SADD', KEYS[5], expected) == 0 then return {'ok', 'copied before'} end
  redis.call('EXPIRE', KEYS[5], 86400)
  local list = KEYS[4]
  local have = redis.call('LRANGE', list, 0, -1)
  local top = 0
  local all = {}
  for i = 1, #have do
    local ms, n = match(have[i], '^(%d+)%-(%d+)')
    if ms then
      if tonumber(n) > top then top = tonumber(n) end
      all[#all + 1] = {tonumber(ms), i, have[i]}
    end
  end
  local added = 0
  for i = 8, #ARGV do
    local ms, body = match(ARGV[i], '^(%d+)%-%d+(.*)$')
    if ms then
      added = added + 1
      all[#all + 1] = {tonumber(ms), #have + added, ms .. '-' .. (top + added) .. body}
    end
  end
  if added == 0 then return {'ok', #have} end
  table.sort(all, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  redis.call('DEL', list)
  local first = math.max(1, #all - keep + 1)
  local batch = {}
  for i = first, #all do
    batch[#batch + 1] = all[i][3]
    if #batch == 1000 or i == #all then
      redis.call('RPUSH', list, unpack(batch))
      batch = {}
    end
  end
  return {'ok', #all - first + 1}
end

-- An expired hold's entry that was not written (another program's list where the log is) does
-- not stop the split: the answer names the list at its end, and the caller warns.
local function answer(reply)
  if log_lost then
    reply[#reply + 1] = 'log_lost'
    reply[#reply + 1] = log_lost
  end
  return reply
end

local raw = redis.call('GET', key)
if not raw then return answer({'missing', false}) end

if op == 'begin' and expected == 'plain' then
  if find(raw, '^stockctl:split:1 ') then return answer({'changed', raw}) end
  if raw == '-1' then return answer({'unlimited', raw}) end
  if raw ~= '0' and not (#raw <= 16 and find(raw, POSITIVE) and tonumber(raw) <= MAX) then
    return answer({'corrupt', raw})
  end
  if redis.call('ZCARD', KEYS[2]) > 0 then
    return answer({'held', redis.call('HGET', KEYS[3], '') or '0'})
  end
  local ttl = redis.call('PTTL', key)
  if ttl > 0 then return answer({'expires', ttl}) end
  local gen, slots = ARGV[3], ARGV[4]
  if not (gen and find(gen, '^%x+$') and slots and find(slots, '^[%d,]+$')) then
    return redis.error_reply('STOCKCTL_INVALID layout ' .. tostring(gen) .. ' ' .. tostring(slots))
  end
  local record = 'stockctl:split:1 fill ' .. gen .. ' ' .. slots .. ' ' .. raw .. ' - -'
  redis.call('SET', key, record)
  return answer({'ok', record})
end

if op == 'rebalanced' then
  -- A history entry only: the moves changed no total, and they happened whatever layout the
  -- key holds now (a merge may have followed).
  local moved, total = ARGV[3], ARGV[4]
  if not (moved and #moved <= 16 and find(moved, POSITIVE)) then
    return redis.error_reply('STOCKCTL_INVALID moved ' .. tostring(moved))
  end
  if not (total and #total <= 16 and (total == '' or find(total, '^%d+$'))) then
    return redis.error_reply('STOCKCTL_INVALID total ' .. tostring(total))
  end
  if logging then
    local log_key, log_first, log_batch, log_item, entry_ms, log_who =
        KEYS[4], false, false, key, false, false
    local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
        'rebalance', moved, total, total, expected or '', ''
    -- @include log_entry
  end
  if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
  return {'ok', raw}
end

if raw ~= expected then return {'changed', raw} end

if op == 'begin' then
  local old_gen, old_slots = match(raw, '^stockctl:split:1 live (%x+) ([%d,]+) %- %- %-$')
  local gen, slots = ARGV[3], ARGV[4]
  if not old_gen or not gen or not slots or (gen == '-') ~= (slots == '-') then
    return redis.error_reply('STOCKCTL_INVALID layout ' .. tostring(gen) .. ' ' .. tostring(slots))
  end
  local record = 'stockctl:split:1 drain ' .. gen .. ' ' .. slots .. ' - ' .. old_gen .. ' '
      .. old_slots
  redis.call('SET', key, record)
  return {'ok', record}
end

if op == 'drained' then
  local gen, slots, old_gen, old_slots =
      match(raw, '^stockctl:split:1 drain (%S+) (%S+) %- (%x+) ([%d,]+)$')
  local units = ARGV[3]
  if not gen or not units or not (units == '0' or find(units, POSITIVE)) then
    return {'changed', raw}
  end
  local record = 'stockctl:split:1 fill ' .. gen .. ' ' .. slots .. ' ' .. units .. ' '
      .. old_gen .. ' ' .. old_slots
  redis.call('SET', key, record)
  return {'ok', record}
end

-- commit
local gen, slots, units = match(raw, '^stockctl:split:1 fill (%S+) (%S+) (%d+) %S+ %S+$')
if not gen then return {'changed', raw} end
local value = units
if gen ~= '-' then value = 'stockctl:split:1 live ' .. gen .. ' ' .. slots .. ' - - -' end
redis.call('SET', key, value)
if logging then
  local log_key, log_first, log_batch, log_item, entry_ms, log_who =
      KEYS[4], false, false, key, false, false
  local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
      gen == '-' and 'merge' or 'split', '', units, units, '', ''
  -- @include log_entry
end
if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
return {'ok', value}
