-- stock: deduct or add QTY units of one item's stock, atomically. A deduction never takes the
-- stock below zero; unlimited stock (-1) never changes.
--
-- KEYS[1]  the item's stock key
-- KEYS[2]  only with an id: the item's request ledger key for ARGV[5] (same hash slot). A call
--          without an id sends KEYS[1] alone (numkeys 1), so that on a cluster it stays a
--          single-key command that follows ASK while its slot migrates.
-- KEYS[#]  the item's change log (a stream, same hash slot), last; sent only with ARGV[7]
-- ARGV[1]  op: "deduct" or "add"
-- ARGV[2]  qty: canonical decimal integer, 1 .. 2^53-1
-- ARGV[3]  initial stock to create a missing key with (canonical, -1 = unlimited); "" = do not
--          create. add puts QTY on top of it.
-- ARGV[4]  expiry in seconds for a key this call creates; "0" = none
-- ARGV[5]  request id; "" = none. With an id the operation is applied at most once: a repeat
--          returns the first answer with replayed = 1, a repeat with another op or QTY is refused
-- ARGV[6]  how long the ledger remembers an id, in seconds
-- ARGV[7]  change log: keep about this many entries; absent or "" = write no log
-- ARGV[8]  change log: who made the change (actor)
-- ARGV[9]  change log: why ("" = no reason)
--
-- Returns {answer, stock, replayed}, answer being the classic design's:
--   -3     not initialized: the key is missing and no initial stock was given
--   -2     insufficient (deduct): nothing changed; stock is the current stock
--   -1     unlimited: the stored value is -1; nothing changed
--   n >= 0 the stock after the operation (stock = n)
-- Error replies, after which nothing has changed:
--   STOCKCTL_CONFLICT <record>  the request id was used for another op or QTY on this item
--   STOCKCTL_CORRUPT <value>    the stored value is not -1 or a canonical integer 0 .. 2^53-1
--   STOCKCTL_OVERFLOW <stock>   add: the sum would pass 2^53-1, where Lua numbers stop being exact
--   STOCKCTL_INVALID <what>     an argument is not what this header says

local MAX = 9007199254740991

-- Only canonical decimals (no sign but a leading '-', no leading zeros) are stock; Lua numbers
-- are doubles, exact up to 2^53.
local function parse_stock(s)
  if s == '-1' then return -1 end
  if type(s) ~= 'string' or #s > 16 or not string.match(s, '^%d+$') then return nil end
  if #s > 1 and string.sub(s, 1, 1) == '0' then return nil end
  local n = tonumber(s)
  if n > MAX then return nil end
  return n
end

local op, request_id = ARGV[1], ARGV[5]
local has_id = request_id ~= nil and request_id ~= ''
if has_id and KEYS[2] == nil then
  return redis.error_reply('STOCKCTL_INVALID a request id needs the ledger key as KEYS[2]')
end
local log_max = ARGV[7]
local logging = log_max ~= nil and log_max ~= ''

-- Appends one change to the item's log: the time is the entry's id. Without a log key the
-- script does no more work than before the log existed.
local function log_change(change, qty, before, after)
  if not logging then return end
  -- Always the same fields, in the same order: a stream then stores their names once per
  -- block instead of once per entry. "" stands for "does not apply".
  redis.call('XADD', KEYS[#KEYS], 'MAXLEN', '~', log_max, '*', 'change', change,
             'qty', qty or '', 'before', before or '', 'after', after, 'request_id', request_id,
             'actor', ARGV[8], 'reason', ARGV[9])
end

-- The ledger record of a request: "<op> <qty> <answer> <stock>". It is written by this same
-- script, in the same slot as the stock, so both survive or are lost together.
local function replay()
  if not has_id then return nil end
  local rec = redis.call('GET', KEYS[2])
  if not rec then return nil end
  local rop, rqty, code, stock = string.match(rec, '^(%a+) (%d+) (%-?%d+) (%-?%d+)$')
  if rop ~= op or rqty ~= ARGV[2] then
    return redis.error_reply('STOCKCTL_CONFLICT ' .. rec)
  end
  return {tonumber(code), tonumber(stock), 1}
end

-- Answers (and records, for a request id) the outcome. "Not initialized" is not recorded:
-- nothing was applied, and a retry that brings an init source must be able to proceed.
local function answer(code, stock)
  if has_id and code ~= -3 then
    local rec = string.format('%s %s %d %d', op, ARGV[2], code, stock)
    redis.call('SET', KEYS[2], rec, 'EX', ARGV[6])
  end
  return {code, stock, 0}
end

if op ~= 'deduct' and op ~= 'add' then
  return redis.error_reply('STOCKCTL_INVALID op ' .. tostring(op))
end
local qty = parse_stock(ARGV[2])
if not qty or qty < 1 then
  return redis.error_reply('STOCKCTL_INVALID qty ' .. tostring(ARGV[2]))
end
local replayed = replay()
if replayed then return replayed end

-- Holds hook: the item's expired holds give their units back before anything reads the stock
-- (see hold-4002.lua, which writes them). An item without holds costs one EXISTS. The holds
-- keys are companions of KEYS[1] (same hash slot) and deliberately not declared: a call without
-- id and log must stay a single-key command (see KEYS[2]). While the slot migrates, a node
-- that runs this call after ASK refuses an undeclared key it does not hold yet: pcall turns
-- that into "no holds here", and the next touch or reap returns them.
local holds_base = KEYS[1]
do
  local open = string.find(holds_base, '{', 1, true)
  local close = open and string.find(holds_base, '}', open + 1, true)
  if not (close and close > open + 1) then holds_base = '{' .. holds_base .. '}' end
end
if redis.pcall('EXISTS', holds_base .. ':holds') == 1 then
  local holds_key, held_key = holds_base .. ':holds', holds_base .. ':held'
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local ids = redis.call('ZRANGEBYSCORE', holds_key, '-inf', now)
  local raw = #ids > 0 and redis.call('GET', KEYS[1])
  local stock = raw and parse_stock(raw)
  -- A corrupt value keeps its holds until it is repaired; a missing key takes them with it.
  if #ids > 0 and not (raw and not stock) then
    local units = 0
    for _, hid in ipairs(ids) do
      local qty = tonumber(redis.call('HGET', held_key, hid) or '0')
      units = units + qty
      redis.call('HDEL', held_key, hid)
      if logging and stock and stock >= 0 then
        redis.call('XADD', KEYS[#KEYS], 'MAXLEN', '~', log_max, '*', 'change', 'expire',
                   'qty', qty, 'before', stock + units - qty, 'after', stock + units,
                   'request_id', '', 'actor', ARGV[8], 'reason', ARGV[9], 'hold_id', hid)
      end
    end
    redis.call('ZREMRANGEBYSCORE', holds_key, '-inf', now)
    if redis.call('HINCRBY', held_key, '', -units) <= 0 then redis.call('DEL', held_key) end
    if stock and stock >= 0 then redis.call('INCRBY', KEYS[1], units) end
  end
end
-- End of the holds hook.

local raw = redis.call('GET', KEYS[1])
local creating = false
if not raw then
  raw = ARGV[3]
  if raw == nil or raw == '' then return answer(-3, -3) end
  if not parse_stock(raw) then
    return redis.error_reply('STOCKCTL_INVALID initial stock ' .. raw)
  end
  creating = true
end

local stock = parse_stock(raw)
if not stock then return redis.error_reply('STOCKCTL_CORRUPT ' .. raw) end
-- Both are at most 2^53-1, so a true sum above MAX never rounds down to MAX or below.
if op == 'add' and stock ~= -1 and stock + qty > MAX then
  return redis.error_reply('STOCKCTL_OVERFLOW ' .. raw)
end

if creating then
  local ttl = tonumber(ARGV[4]) or 0
  if ttl > 0 then
    redis.call('SET', KEYS[1], raw, 'EX', ARGV[4])
  else
    redis.call('SET', KEYS[1], raw)
  end
  log_change('init', nil, nil, raw)
end
if stock == -1 then return answer(-1, -1) end
if op == 'add' then
  -- INCRBY and DECRBY do the arithmetic on Redis integers, never on doubles.
  local now = redis.call('INCRBY', KEYS[1], ARGV[2])
  log_change(op, ARGV[2], raw, now)
  return answer(now, now)
end
if stock < qty then return answer(-2, stock) end
local left = redis.call('DECRBY', KEYS[1], ARGV[2])
log_change(op, ARGV[2], raw, left)
return answer(left, left)
