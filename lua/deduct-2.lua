-- deduct: take QTY units from one item's stock, atomically; stock never goes below zero.
--
-- KEYS[1]  the item's stock key
-- KEYS[2]  the item's request ledger key for ARGV[4] (same hash slot); unused without an id
-- ARGV[1]  qty: canonical decimal integer, 1 .. 2^53-1
-- ARGV[2]  initial stock to create a missing key with (canonical, -1 = unlimited); "" = do not create
-- ARGV[3]  expiry in seconds for a key this call creates; "0" = none
-- ARGV[4]  request id; "" = none. With an id the operation is applied at most once: a repeat
--          returns the first answer with replayed = 1, a repeat with another op or QTY is refused
-- ARGV[5]  how long the ledger remembers an id, in seconds
--
-- Returns {answer, stock, replayed}, answer being the classic design's:
--   -3     not initialized: the key is missing and no initial stock was given
--   -2     insufficient: nothing changed; stock is the current stock
--   -1     unlimited: the stored value is -1; nothing changed
--   n >= 0 the remaining stock after the deduction (stock = n)
-- Error replies, after which nothing has changed:
--   STOCKCTL_CONFLICT <record>  the request id was used for another op or QTY on this item
--   STOCKCTL_CORRUPT <value>  the stored value is not -1 or a canonical integer 0 .. 2^53-1
--   STOCKCTL_INVALID <what>   an argument is not what this header says

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

-- The ledger record of a request: "<op> <qty> <answer> <stock>". It is written by this same
-- script, in the same slot as the stock, so both survive or are lost together.
local function replay(op)
  if ARGV[4] == nil or ARGV[4] == '' then return nil end
  local rec = redis.call('GET', KEYS[2])
  if not rec then return nil end
  local rop, rqty, code, stock = string.match(rec, '^(%a+) (%d+) (%-?%d+) (%-?%d+)$')
  if rop ~= op or rqty ~= ARGV[1] then
    return redis.error_reply('STOCKCTL_CONFLICT ' .. rec)
  end
  return {tonumber(code), tonumber(stock), 1}
end

-- Answers (and records, for a request id) the outcome. "Not initialized" is not recorded:
-- nothing was applied, and a retry that brings an init source must be able to proceed.
local function answer(op, code, stock)
  if ARGV[4] ~= nil and ARGV[4] ~= '' and code ~= -3 then
    local rec = string.format('%s %s %d %d', op, ARGV[1], code, stock)
    redis.call('SET', KEYS[2], rec, 'EX', ARGV[5])
  end
  return {code, stock, 0}
end

local qty = parse_stock(ARGV[1])
if not qty or qty < 1 then
  return redis.error_reply('STOCKCTL_INVALID qty ' .. tostring(ARGV[1]))
end
local replayed = replay('deduct')
if replayed then return replayed end

local raw = redis.call('GET', KEYS[1])
if not raw then
  local init = ARGV[2]
  if init == nil or init == '' then return answer('deduct', -3, -3) end
  if not parse_stock(init) then
    return redis.error_reply('STOCKCTL_INVALID initial stock ' .. init)
  end
  local ttl = tonumber(ARGV[3]) or 0
  if ttl > 0 then
    redis.call('SET', KEYS[1], init, 'EX', ARGV[3])
  else
    redis.call('SET', KEYS[1], init)
  end
  raw = init
end

local stock = parse_stock(raw)
if not stock then return redis.error_reply('STOCKCTL_CORRUPT ' .. raw) end
if stock == -1 then return answer('deduct', -1, -1) end
if stock < qty then return answer('deduct', -2, stock) end
-- DECRBY does the arithmetic on Redis integers, never on doubles.
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
return answer('deduct', left, left)
