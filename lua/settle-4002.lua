-- settle: confirm, release or cancel a hold or an order, exactly once.
--
-- KEYS[1]  the record of the id (a string written by hold-4002.lua; the state is rewritten in
--          place)
-- KEYS[2]  the index of items with holds (unused here; kept in the same place as for hold)
-- then, per line of the record, in its order, G keys (G = ARGV[6]): the item's stock key, its
--          holds, its held units and, when G = 4, its change log
-- ARGV[1]  action: "confirm", "release" or "cancel"
-- ARGV[2]  the id
-- ARGV[3]  change log: keep about this many entries; "" = write no log
-- ARGV[4]  change log: actor; ARGV[5]: reason ("" = none)
-- ARGV[6]  G, the keys per line (3, or 4 with the change log)
--
-- Returns {status, replayed, stock_1, stock_2, ...}: status "ok", "expired" (the hold expired:
-- it cannot be confirmed, and its units are back), "released" (a confirm of a hold that was
-- released: a conflict that names the release), "removed" (a confirm of a held hold one of
-- whose lines no longer held its units, deleted out of band: the hold was released instead;
-- `replayed` is then that line's number, from 1), "conflict" (the action does not apply to what
-- the id is now), or "missing" (no record: unknown id, or forgotten after --request-ttl; the
-- reply is then {"missing", 0}, without stocks); the stocks are each line's current stock
-- after the call (-1 unlimited, -3 missing, -4 not a stock value).
-- What each action does to each state:
--   held:      confirm -> confirmed (a line whose units are gone: released, "removed");
--              release, cancel -> released
--   expired (a held hold past its expiry, or one already returned): every action -> expired
--   confirmed: confirm -> ok replayed; release -> conflict; cancel -> cancelled
--   released:  confirm -> released; release, cancel -> ok replayed
--   ordered:   cancel -> cancelled; confirm, release -> conflict
--   cancelled: cancel -> ok replayed; confirm, release -> conflict
-- Error replies, after which nothing changed (but see "action"):
--   STOCKCTL_INVALID <what>       the keys do not match the record ("keys per line", "line
--                                 count", "key <key>"), "record <key>": the record is not a
--                                 string, or "action <action>": not one of the three. The
--                                 action is checked last, so a held hold past its expiry has
--                                 been expired (units back, state written) first.
--   STOCKCTL_CORRUPT <i> <value>  line i still holds units, or a cancel would give them back
--                                 to it, and its stored value is not -1 or a canonical integer
--                                 0 .. 2^53-1 (a split item's layout record too); an answer
--                                 that touches no units there is given, its stock -4
-- A record that is a hash is a tombstone (tombstone-1.lua), not one to settle; stockctl never
-- sends it one (the cluster protocol skips tombstoned groups; settle_one refuses a record without
-- lines). The record was a hash before it was one string; no release wrote that form, so it is
-- not read.
--
-- Written flat, as hold-4002.lua is: no closures, one table for the lines' keys, quantities
-- and stocks before, the reply's table holding the stocks, and the clock read only for a hold
-- that is still held.

local find, call = string.find, redis.call
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false
local action, id, G = ARGV[1], ARGV[2], ARGV[6]
if G == '3' then G = 3 elseif G == '4' then G = 4 else G = tonumber(G) end
local log_max = ARGV[3]
local logging = log_max ~= nil and log_max ~= ''

-- The record's state, expiry and lines: line i's key, qty and stock before ("-1" when the item
-- was unlimited) at lines[3i-2], lines[3i-1], lines[3i]; `rest` is the record after its state.
local state, exp, rest
local lines, n = {}, 0
local record = redis.pcall('GET', KEYS[1])
if not record then return {'missing', 0} end
if type(record) == 'table' then return redis.error_reply('STOCKCTL_INVALID record ' .. KEYS[1]) end
do
  -- "<state> <expires_at_ms> <stock before...>\n<kind>\n<sku>\t<key>\t<qty>\n..."
  local head_end = find(record, '\n', 1, true)
  local word_no = 0
  for word in string.gmatch(string.sub(record, 1, head_end - 1), '%S+') do
    word_no = word_no + 1
    if word_no == 1 then
      state = word
    elseif word_no == 2 then
      exp = tonumber(word)
    else
      lines[3 * (word_no - 2)] = word
    end
  end
  local first = true
  for text in string.gmatch(string.sub(record, head_end + 1), '[^\n]+') do
    if first then
      first = false  -- the kind
    else
      local _, key, qty = string.match(text, '^([^\t]*)\t([^\t]*)\t(%d+)$')
      lines[3 * n + 1], lines[3 * n + 2] = key, qty
      n = n + 1
    end
  end
  rest = string.sub(record, #state + 1)
end
if G ~= 3 and G ~= 4 then return redis.error_reply('STOCKCTL_INVALID keys per line') end
if #KEYS ~= 2 + G * n then return redis.error_reply('STOCKCTL_INVALID line count') end
for i = 1, n do
  if KEYS[3 + G * (i - 1)] ~= lines[3 * i - 2] then
    return redis.error_reply('STOCKCTL_INVALID key ' .. KEYS[3 + G * (i - 1)])
  end
end

-- The reply: {status, replayed, stock_1, ...}. Every line's stock before any change goes in
-- it (units go back only to a sound value) and becomes the stock after. A stored value that is
-- not a stock value (corrupt, or a split item's layout record) is -4 there: it is an error only
-- where the line still holds units or a cancel would give them back (checked below, before
-- anything is written); an answer that touches no units there (expired and already given back,
-- a conflict, a replay) is given all the same.
local out = {false, 0, nil, nil, nil}
local bad = {}
-- Every script that touches an item gives back its expired holds first (this hold's own, when
-- it has expired, among them): the stocks this answer reports are then the items' stocks now,
-- as get shows them, not a value that still lacks other holds' expired units. (On a cluster a
-- group's holds expire through reap: their scores are far away, and nothing is found here.)
local time = call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for i = 1, n do
  local k = 2 + G * (i - 1)
  local stock_key, holds_key, held_key = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local ids = call('ZRANGEBYSCORE', holds_key, '-inf', now)
  if #ids > 0 then
    local log_key, actor, reason = logging and G == 4 and KEYS[k + 4], ARGV[4], ARGV[5]
    -- @include give_back_expired
  end
end
for i = 1, n do
  local raw = call('GET', KEYS[3 + G * (i - 1)])
  local stock = -3
  if raw then
    -- @include stock_value
    if raw_len then
      stock = tonumber(raw)
    else
      stock, bad[i] = -4, raw
    end
  end
  out[i + 2] = stock
end

-- A hold still held ends here: it expired (every action then finds it expired), or the action
-- confirms, releases or cancels it. Its entry leaves each item's holds; `give_back` returns its
-- units to stock. A line whose entry is gone (the item's expired holds were returned already)
-- is skipped.
--
-- A confirm that finds a line's entry gone while the hold is still held (not unlimited: such a
-- line holds nothing) must not sell it: its units were taken away out of band (delete --force
-- removed the item's holds, or the held key was deleted or evicted), and a sale recorded here
-- would be given back by a later cancel, making units. The hold is released instead (the
-- lines still held give their units back) and the answer is "removed", naming that line: on a
-- cluster, where the record decided the confirm already, this group thus still reaches a final
-- state, and a later cancel finds it released and gives nothing back.
local change, give_back, new_state, removed
local qtys = {}
if state == 'held' then
  if now >= exp then
    change, give_back, new_state = 'expire', true, 'expired'
  elseif action == 'confirm' then
    change, give_back, new_state = 'confirm', false, 'confirmed'
    for i = 1, n do
      qtys[i] = call('HGET', KEYS[2 + G * (i - 1) + 3], id)
      if not qtys[i] and lines[3 * i] ~= '-1' and not removed then
        removed = i
        change, give_back, new_state = 'release', true, 'released'
      end
    end
  elseif action == 'release' or action == 'cancel' then
    change, give_back, new_state = 'release', true, 'released'
  end
end
-- A line still holding units on a value that is not a stock value stops the settle: its units
-- could not go back, and a sale there is not made blind either (repair it, then run again).
if change and next(bad) then
  for i in pairs(bad) do
    if qtys[i] == nil then qtys[i] = call('HGET', KEYS[2 + G * (i - 1) + 3], id) end
    if qtys[i] then return redis.error_reply('STOCKCTL_CORRUPT ' .. i .. ' ' .. bad[i]) end
  end
end
if change then
  for i = 1, n do
    local k = 2 + G * (i - 1)
    local qty = qtys[i]
    if qty == nil then qty = call('HGET', KEYS[k + 3], id) end
    if qty then
      call('ZREM', KEYS[k + 2], id)
      call('HDEL', KEYS[k + 3], id)
      if call('HINCRBY', KEYS[k + 3], '', -tonumber(qty)) <= 0 then call('DEL', KEYS[k + 3]) end
      local before = out[i + 2]
      if give_back and before >= 0 then out[i + 2] = call('INCRBY', KEYS[k + 1], qty) end
      if logging and out[i + 2] ~= -3 and out[i + 2] ~= -4 then
        local log_key, log_first, log_batch, log_item, entry_ms =
            KEYS[k + 4], false, false, KEYS[k + 1], false
        local log_who = false
        local actor, reason = ARGV[4], ARGV[5]
        local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
            change, qty, before, out[i + 2], '', id
        -- @include log_entry
      end
    end
  end
  call('SET', KEYS[1], new_state .. rest, 'KEEPTTL')
  if removed then
    out[1], out[2] = 'removed', removed
    if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
    return out
  end
  if change ~= 'expire' then
    out[1] = 'ok'
    if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
    return out
  end
  state = new_state
end

local status, replayed = 'conflict', 0
if action == 'confirm' then
  if state == 'confirmed' then
    status, replayed = 'ok', 1
  elseif state == 'expired' then
    status = 'expired'
  elseif state == 'released' then
    status = 'released'
  end
elseif action == 'release' then
  if state == 'released' then
    status, replayed = 'ok', 1
  elseif state == 'expired' then
    status = 'expired'
  end
elseif action == 'cancel' then
  if state == 'confirmed' or state == 'ordered' then
    -- Gives a sale's units back; unlimited and missing items stay as they are. A line whose
    -- value is not a stock value cannot take them: an error before anything is written.
    for i in pairs(bad) do
      if lines[3 * i] ~= '-1' then
        return redis.error_reply('STOCKCTL_CORRUPT ' .. i .. ' ' .. bad[i])
      end
    end
    for i = 1, n do
      local before = out[i + 2]
      if lines[3 * i] ~= '-1' and before >= 0 then
        local k, qty = 2 + G * (i - 1), lines[3 * i - 1]
        out[i + 2] = call('INCRBY', KEYS[k + 1], qty)
        if logging then
          local log_key, log_first, log_batch, log_item, entry_ms =
              KEYS[k + 4], false, false, KEYS[k + 1], false
          local log_who = false
          local actor, reason = ARGV[4], ARGV[5]
          local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
              'cancel', qty, before, out[i + 2], '', id
          -- @include log_entry
        end
      end
    end
    call('SET', KEYS[1], 'cancelled' .. rest, 'KEEPTTL')
    status = 'ok'
  elseif state == 'cancelled' or state == 'released' then
    status, replayed = 'ok', 1
  elseif state == 'expired' then
    status = 'expired'
  end
else
  return redis.error_reply('STOCKCTL_INVALID action ' .. tostring(action))
end
out[1], out[2] = status, replayed
if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
return out
