-- deduct: take QTY units from one item's stock, atomically; stock never goes below zero.
--
-- KEYS[1]  the item's stock key
-- ARGV[1]  qty: canonical decimal integer, 1 .. 2^53-1
-- ARGV[2]  initial stock to create a missing key with (canonical, -1 = unlimited); "" = do not create
-- ARGV[3]  expiry in seconds for a key this call creates; "0" = none
--
-- Returns {answer, stock}, answer being the classic design's:
--   -3     not initialized: the key is missing and no initial stock was given
--   -2     insufficient: nothing changed; stock is the current stock
--   -1     unlimited: the stored value is -1; nothing changed
--   n >= 0 the remaining stock after the deduction (stock = n)
-- Error replies, after which nothing has changed:
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

local qty = parse_stock(ARGV[1])
if not qty or qty < 1 then
  return redis.error_reply('STOCKCTL_INVALID qty ' .. tostring(ARGV[1]))
end

local raw = redis.call('GET', KEYS[1])
if not raw then
  local init = ARGV[2]
  if init == nil or init == '' then return {-3, -3} end
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
if stock == -1 then return {-1, -1} end
if stock < qty then return {-2, stock} end
-- DECRBY does the arithmetic on Redis integers, never on doubles.
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
return {left, left}
