-- hold: hold or order several items all-or-nothing, once per id (one Redis, or one slot).
--
-- A hold takes its units out of each item's stock at once and keeps them in the item's holds
-- until confirm (sold), release (given back) or expiry (given back by whichever script next
-- touches the item, or by reap). An order deducts its lines for good.
--
-- KEYS[1]  the record of the id (a string, see "The record" below)
-- KEYS[2]  the index of items with holds (a sorted set: stock key -> earliest expiry, ms)
-- then, per line, G keys (G = ARGV[9]): the item's stock key, its holds (a sorted set:
--          hold id -> expiry ms), its held units (a hash: hold id -> qty, "" -> their sum) and,
--          when G = 4, its change log
-- ARGV[1]  kind: "hold" or "order"
-- ARGV[2]  the id
-- ARGV[3]  hold: how long it lasts, in ms
-- ARGV[4]  how long the record (and so the id) is remembered, in seconds
-- ARGV[5]  expiry in seconds for stock keys this call creates; "0" = none
-- ARGV[6]  change log: keep about this many entries; "" = write no log
-- ARGV[7]  change log: actor; ARGV[8]: reason ("" = none)
-- ARGV[9]  G, the keys per line (3, or 4 with the change log)
-- then, per line, 3 arguments: the SKU, the qty (canonical 1 .. 2^53-1), the initial stock to
--          create a missing key with ("" = do not create). Lines name distinct items; the
--          caller merges lines of the same item first and sends them in one order (stockctl:
--          by SKU), so the lines' text in their order is canonical: a repeat that names the same
--          lines in another order is a conflict.
--
-- Returns {replayed, expires_at_ms, code_1, stock_1, code_2, stock_2, ...}, per line the
-- deduction's codes: -3 not initialized, -2 insufficient (stock = current), -1 unlimited,
-- n >= 0 ok (stock = n, after the hold; when another line failed, the current stock). Only
-- when every line is ok or unlimited is anything held or deducted, and only then is the id
-- recorded: a refused attempt changed nothing, so the same id may try again.
-- Error replies, after which no line is held:
--   STOCKCTL_CONFLICT <kind>  the id was used for another kind or other lines
--   STOCKCTL_CORRUPT <value>  a stored value is not -1 or a canonical integer 0 .. 2^53-1
--   STOCKCTL_INVALID <what>   an argument is not what this header says
--
-- The record, one string written with SET ... EX (a new key with its expiry, the least a new
-- id can cost; no hash fields, no JSON):
--   "<state> <expires_at_ms> <stock before, per line>\n<kind>\n<sku>\t<key>\t<qty>\n..."
-- Everything after the first line is the canonical text of the lines that a repeat must
-- match; the first answer is rebuilt from the stocks before (-1: unlimited). settle-4002.lua
-- rewrites the state in place. A record of the previous version (a hash) is still answered.

local MAX = 9007199254740991
local kind, id, G = ARGV[1], ARGV[2], tonumber(ARGV[9])
local log_max = ARGV[6]
local logging = log_max ~= nil and log_max ~= ''

-- A canonical stock value ("-1", "0", or 1 .. 2^53-1 without leading zeros) as a number, or nil.
-- One anchored find decides the form; the number is converted once.
local function parse_stock(s)
  if type(s) ~= 'string' or #s > 16 then return nil end
  if string.find(s, '^[1-9]%d*$') then
    local n = tonumber(s)
    if n > MAX then return nil end
    return n
  end
  if s == '0' then return 0 end
  if s == '-1' then return -1 end
  return nil
end

local function log_change(log_key, change, qty, before, after)
  if not logging then return end
  redis.call('XADD', log_key, 'MAXLEN', '~', log_max, '*', 'change', change, 'qty', qty,
             'before', before, 'after', after, 'request_id', '', 'actor', ARGV[7],
             'reason', ARGV[8], 'hold_id', id)
end

-- The server's clock in ms, read once and only when needed (an order on items without holds
-- never needs it).
local now_ms
local function server_now()
  if not now_ms then
    local time = redis.call('TIME')
    now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return now_ms
end

-- Gives back the units of the item's holds that expired by now (the same steps in every
-- script that touches an item). A corrupt stock value keeps its holds until it is repaired.
local function expire_holds(stock_key, holds_key, held_key, log_key)
  if redis.call('EXISTS', holds_key) == 0 then return end
  local now = server_now()
  local ids = redis.call('ZRANGEBYSCORE', holds_key, '-inf', now)
  if #ids == 0 then return end
  local raw = redis.call('GET', stock_key)
  local stock = raw and parse_stock(raw)
  if raw and not stock then return end
  local units = 0
  for _, hid in ipairs(ids) do
    local qty = tonumber(redis.call('HGET', held_key, hid) or '0')
    units = units + qty
    redis.call('HDEL', held_key, hid)
    if logging and stock and stock >= 0 then
      redis.call('XADD', log_key, 'MAXLEN', '~', log_max, '*', 'change', 'expire',
                 'qty', qty, 'before', stock + units - qty, 'after', stock + units,
                 'request_id', '', 'actor', ARGV[7], 'reason', ARGV[8], 'hold_id', hid)
    end
  end
  redis.call('ZREMRANGEBYSCORE', holds_key, '-inf', now)
  if redis.call('HINCRBY', held_key, '', -units) <= 0 then redis.call('DEL', held_key) end
  -- A missing key (it expired, or was deleted) takes its holds with it; unlimited stays so.
  if stock and stock >= 0 then redis.call('INCRBY', stock_key, units) end
end

if kind ~= 'hold' and kind ~= 'order' then
  return redis.error_reply('STOCKCTL_INVALID kind ' .. tostring(kind))
end
if G ~= 3 and G ~= 4 then return redis.error_reply('STOCKCTL_INVALID keys per line') end
local n = (#KEYS - 2) / G
if n < 1 or n ~= math.floor(n) or #ARGV ~= 9 + 3 * n then
  return redis.error_reply('STOCKCTL_INVALID line count')
end


-- The lines as a canonical text: a repeat with the same id must name the same lines.
local canon, qtys = {kind}, {}
for i = 1, n do
  local qty = parse_stock(ARGV[9 + 3 * i - 1])
  qtys[i] = qty
  if not qty or qty < 1 then
    return redis.error_reply('STOCKCTL_INVALID qty ' .. tostring(ARGV[9 + 3 * i - 1]))
  end
  canon[i + 1] = ARGV[9 + 3 * i - 2] .. '\t' .. KEYS[2 + G * (i - 1) + 1] .. '\t'
      .. ARGV[9 + 3 * i - 1]
end
canon = table.concat(canon, '\n')

-- A repeat: the first answer, rebuilt from the record's stocks before.
local ok_record, record = pcall(redis.call, 'GET', KEYS[1])
if not ok_record then
  -- The previous version's record (a hash): its canonical text is the sorted "<key>\t<qty>"
  -- lines and the kind; its answer is stored as it was.
  local old = {kind}
  for i = 1, n do old[i + 1] = KEYS[2 + G * (i - 1) + 1] .. '\t' .. ARGV[9 + 3 * i - 1] end
  table.sort(old)
  local hash = redis.call('HMGET', KEYS[1], 'canon', 'answer')
  if hash[1] ~= table.concat(old, '\n') then
    return redis.error_reply('STOCKCTL_CONFLICT ' .. kind)
  end
  local out = {1}
  for word in string.gmatch(hash[2], '%S+') do out[#out + 1] = tonumber(word) end
  return out
end
if record then
  local head_end = string.find(record, '\n', 1, true)
  if not head_end or string.sub(record, head_end + 1) ~= canon then
    return redis.error_reply('STOCKCTL_CONFLICT ' .. kind)
  end
  local out, word_no = {1}, 0
  for word in string.gmatch(string.sub(record, 1, head_end - 1), '%S+') do
    word_no = word_no + 1
    if word_no == 2 then
      out[2] = tonumber(word)
    elseif word_no > 2 then
      local left = tonumber(word)
      if left ~= -1 then left = left - tonumber(ARGV[9 + 3 * (word_no - 2) - 1]) end
      out[#out + 1] = left
      out[#out + 1] = left
    end
  end
  return out
end

-- Check every line before changing any (expired holds first: their units are available).
local codes, stocks, created, befores = {}, {}, {}, {}
local all_ok = true
for i = 1, n do
  local k = 2 + G * (i - 1)
  local stock_key = KEYS[k + 1]
  expire_holds(stock_key, KEYS[k + 2], KEYS[k + 3], KEYS[k + 4])
  local qty = qtys[i]
  local raw = redis.call('GET', stock_key)
  if not raw then
    local init = ARGV[9 + 3 * i]
    if init ~= nil and init ~= '' then
      if not parse_stock(init) then return redis.error_reply('STOCKCTL_INVALID initial stock') end
      raw = init
      created[i] = true
    end
  end
  befores[i] = raw
  if not raw then
    codes[i], stocks[i] = -3, -3
  else
    local stock = parse_stock(raw)
    if not stock then return redis.error_reply('STOCKCTL_CORRUPT ' .. raw) end
    if stock == -1 then
      codes[i], stocks[i] = -1, -1
    elseif stock < qty then
      codes[i], stocks[i] = -2, stock
    else
      codes[i], stocks[i] = stock, stock
    end
  end
  if codes[i] == -3 or codes[i] == -2 then all_ok = false end
end

-- Keys created from an init source are created even when another line is short, as a
-- deduction creates them: the item now exists with its initial stock.
for i = 1, n do
  if created[i] then
    local k = 2 + G * (i - 1)
    local init = ARGV[9 + 3 * i]
    if tonumber(ARGV[5]) > 0 then
      redis.call('SET', KEYS[k + 1], init, 'EX', ARGV[5])
    else
      redis.call('SET', KEYS[k + 1], init)
    end
    log_change(KEYS[k + 4], 'init', '', '', init)
  end
end

local expires_at = kind == 'hold' and server_now() + tonumber(ARGV[3]) or 0
local out = {0, expires_at}
if not all_ok then
  for i = 1, n do
    out[#out + 1] = codes[i]
    out[#out + 1] = stocks[i]
  end
  return out
end

for i = 1, n do
  local k = 2 + G * (i - 1)
  local qty = ARGV[9 + 3 * i - 1]
  if codes[i] ~= -1 then
    local left = redis.call('DECRBY', KEYS[k + 1], qty)
    log_change(KEYS[k + 4], kind, qty, stocks[i], left)
    if kind == 'hold' then
      redis.call('ZADD', KEYS[k + 2], expires_at, id)
      redis.call('HSET', KEYS[k + 3], id, qty)
      redis.call('HINCRBY', KEYS[k + 3], '', qty)
      local earliest = redis.call('ZSCORE', KEYS[2], KEYS[k + 1])
      if not earliest or tonumber(earliest) > expires_at then
        redis.call('ZADD', KEYS[2], expires_at, KEYS[k + 1])
      end
    end
    codes[i], stocks[i] = left, left
  end
  out[#out + 1] = codes[i]
  out[#out + 1] = stocks[i]
end

-- The record outlives the hold: confirm and cancel must find it.
local keep = math.max(tonumber(ARGV[4]), math.ceil(tonumber(ARGV[3]) / 1000) + 60)
redis.call('SET', KEYS[1], (kind == 'hold' and 'held ' or 'ordered ') .. expires_at .. ' '
           .. table.concat(befores, ' ') .. '\n' .. canon, 'EX', keep)
return out
