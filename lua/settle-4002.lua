-- settle: confirm, release or cancel a hold or an order, exactly once.
--
-- KEYS[1]  the record of the id (written by hold-4002.lua: a string, or a hash from its previous
--          version; the state is rewritten in the record's own form)
-- KEYS[2]  the index of items with holds (unused here; kept in the same place as for hold)
-- then, per line of the record, in its order, G keys (G = ARGV[6]): the item's stock key, its
--          holds, its held units and, when G = 4, its change log
-- ARGV[1]  action: "confirm", "release" or "cancel"
-- ARGV[2]  the id
-- ARGV[3]  change log: keep about this many entries; "" = write no log
-- ARGV[4]  change log: actor; ARGV[5]: reason ("" = none)
-- ARGV[6]  G, the keys per line (3, or 4 with the change log)
--
-- Returns {status, replayed, stock_1, stock_2, ...}: status "ok", "expired" (a hold that
-- expired or was released cannot be confirmed), "conflict" (the action does not apply to what
-- the id is now), or "missing" (no record: unknown id, or forgotten after --request-ttl); the
-- stocks are each line's current stock after the call (-1 unlimited, -3 missing).
-- What each action does to each state:
--   held:      confirm -> confirmed; release, cancel -> released
--   expired (a held hold past its expiry, or one already returned): every action -> expired
--   confirmed: confirm -> ok replayed; release -> conflict; cancel -> cancelled
--   released:  confirm -> expired; release, cancel -> ok replayed
--   ordered:   cancel -> cancelled; confirm, release -> conflict
--   cancelled: cancel -> ok replayed; confirm, release -> conflict
-- Error replies: STOCKCTL_INVALID <what> (the keys do not match the record), STOCKCTL_CORRUPT
-- <value> (a stock value to give units back to is corrupt), after which nothing changed.

local MAX = 9007199254740991
local action, id, G = ARGV[1], ARGV[2], tonumber(ARGV[6])
local log_max = ARGV[3]
local logging = log_max ~= nil and log_max ~= ''

local function parse_stock(s)
  if s == '-1' then return -1 end
  if type(s) ~= 'string' or #s > 16 or not string.match(s, '^%d+$') then return nil end
  if #s > 1 and string.sub(s, 1, 1) == '0' then return nil end
  local n = tonumber(s)
  if n > MAX then return nil end
  return n
end

-- The record's state, expiry and lines ({sku, key, qty, "-1" when the item was unlimited}), and
-- how to write a new state back.
local state, exp, lines, save_state
local ok_record, record = pcall(redis.call, 'GET', KEYS[1])
if not ok_record then
  -- The previous version's record (a hash, the lines in JSON).
  record = redis.call('HMGET', KEYS[1], 'state', 'exp', 'lines')
  state, exp, lines = record[1], tonumber(record[2]), cjson.decode(record[3])
  save_state = function(new) redis.call('HSET', KEYS[1], 'state', new) end
else
  if not record then return {'missing', 0} end
  -- "<state> <expires_at_ms> <stock before...>\n<kind>\n<sku>\t<key>\t<qty>\n..."
  local head_end = string.find(record, '\n', 1, true)
  local words = {}
  for word in string.gmatch(string.sub(record, 1, head_end - 1), '%S+') do
    words[#words + 1] = word
  end
  state, exp, lines = words[1], tonumber(words[2]), {}
  local first = true
  for text in string.gmatch(string.sub(record, head_end + 1), '[^\n]+') do
    if first then
      first = false  -- the kind
    else
      local sku, key, qty = string.match(text, '^([^\t]*)\t([^\t]*)\t(%d+)$')
      lines[#lines + 1] = {sku, key, qty, words[2 + #lines + 1]}
    end
  end
  local rest = string.sub(record, #state + 1)
  save_state = function(new) redis.call('SET', KEYS[1], new .. rest, 'KEEPTTL') end
end
if G ~= 3 and G ~= 4 then return redis.error_reply('STOCKCTL_INVALID keys per line') end
if #KEYS ~= 2 + G * #lines then return redis.error_reply('STOCKCTL_INVALID line count') end
for i, line in ipairs(lines) do
  if KEYS[2 + G * (i - 1) + 1] ~= line[2] then
    return redis.error_reply('STOCKCTL_INVALID key ' .. KEYS[2 + G * (i - 1) + 1])
  end
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local function log_change(k, change, qty, before, after)
  if not logging then return end
  redis.call('XADD', KEYS[k + 4], 'MAXLEN', '~', log_max, '*', 'change', change, 'qty', qty,
             'before', before, 'after', after, 'request_id', '', 'actor', ARGV[4],
             'reason', ARGV[5], 'hold_id', id)
end

-- Every line's stock before any change: units go back only to a sound value.
local stocks = {}
for i = 1, #lines do
  local raw = redis.call('GET', KEYS[2 + G * (i - 1) + 1])
  if raw then
    stocks[i] = parse_stock(raw)
    if not stocks[i] then return redis.error_reply('STOCKCTL_CORRUPT ' .. raw) end
  else
    stocks[i] = -3
  end
end

-- Takes this hold's entry out of each item's holds; `give_back` returns its units to stock.
-- A line whose entry is gone (the item's expired holds were returned already) is skipped.
local function end_hold(change, give_back)
  for i, line in ipairs(lines) do
    local k = 2 + G * (i - 1)
    local qty = redis.call('HGET', KEYS[k + 3], id)
    if qty then
      redis.call('ZREM', KEYS[k + 2], id)
      redis.call('HDEL', KEYS[k + 3], id)
      if redis.call('HINCRBY', KEYS[k + 3], '', -tonumber(qty)) <= 0 then
        redis.call('DEL', KEYS[k + 3])
      end
      local before = stocks[i]
      if give_back and before >= 0 then stocks[i] = redis.call('INCRBY', KEYS[k + 1], qty) end
      if stocks[i] ~= -3 then log_change(k, change, qty, before, stocks[i]) end
    end
  end
end

-- Gives a sale's units back (cancel); unlimited and missing items stay as they are.
local function give_back_sale()
  for i, line in ipairs(lines) do
    local k = 2 + G * (i - 1)
    if line[4] ~= '-1' and stocks[i] >= 0 then
      local before = stocks[i]
      stocks[i] = redis.call('INCRBY', KEYS[k + 1], line[3])
      log_change(k, 'cancel', line[3], before, stocks[i])
    end
  end
end

local function answer(status, replayed)
  local out = {status, replayed}
  for i = 1, #lines do out[#out + 1] = stocks[i] end
  return out
end

if state == 'held' and now >= exp then
  end_hold('expire', true)
  state = 'expired'
  save_state(state)
end

if action == 'confirm' then
  if state == 'held' then
    end_hold('confirm', false)
    save_state('confirmed')
    return answer('ok', 0)
  end
  if state == 'confirmed' then return answer('ok', 1) end
  if state == 'expired' or state == 'released' then return answer('expired', 0) end
  return answer('conflict', 0)
elseif action == 'release' then
  if state == 'held' then
    end_hold('release', true)
    save_state('released')
    return answer('ok', 0)
  end
  if state == 'released' then return answer('ok', 1) end
  if state == 'expired' then return answer('expired', 0) end
  return answer('conflict', 0)
elseif action == 'cancel' then
  if state == 'held' then
    end_hold('release', true)
    save_state('released')
    return answer('ok', 0)
  end
  if state == 'confirmed' or state == 'ordered' then
    give_back_sale()
    save_state('cancelled')
    return answer('ok', 0)
  end
  if state == 'cancelled' or state == 'released' then return answer('ok', 1) end
  if state == 'expired' then return answer('expired', 0) end
  return answer('conflict', 0)
end
return redis.error_reply('STOCKCTL_INVALID action ' .. tostring(action))
