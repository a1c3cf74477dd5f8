-- add: give QTY units back to one item's stock, atomically; unlimited stays unlimited.
--
-- KEYS[1]  the item's stock key
-- ARGV[1]  qty: canonical decimal integer, 1 .. 2^53-1
-- ARGV[2]  initial stock to create a missing key with, before adding (canonical, -1 = unlimited);
--          "" = do not create
-- ARGV[3]  expiry in seconds for a key this call creates; "0" = none
--
-- Returns {answer, stock}:
--   -3     not initialized: the key is missing and no initial stock was given
--   -1     unlimited: the stored value is -1 (and stays so)
--   n >= 0 the stock after the addition (stock = n)
-- Error replies, after which nothing has changed:
--   STOCKCTL_CORRUPT <value>   the stored value is not -1 or a canonical integer 0 .. 2^53-1
--   STOCKCTL_OVERFLOW <stock>  the sum would pass 2^53-1, where Lua numbers stop being exact
--   STOCKCTL_INVALID <what>    an argument is not what this header says

local MAX = 9007199254740991

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
local creating = false
if not raw then
  raw = ARGV[2]
  if raw == nil or raw == '' then return {-3, -3} end
  if not parse_stock(raw) then
    return redis.error_reply('STOCKCTL_INVALID initial stock ' .. raw)
  end
  creating = true
end

local stock = parse_stock(raw)
if not stock then return redis.error_reply('STOCKCTL_CORRUPT ' .. raw) end
-- Both are at most 2^53-1, so a true sum above MAX never rounds down to MAX or below.
if stock ~= -1 and stock + qty > MAX then
  return redis.error_reply('STOCKCTL_OVERFLOW ' .. raw)
end

if creating then
  local ttl = tonumber(ARGV[3]) or 0
  if ttl > 0 then
    redis.call('SET', KEYS[1], raw, 'EX', ARGV[3])
  else
    redis.call('SET', KEYS[1], raw)
  end
end
if stock == -1 then return {-1, -1} end
local now = redis.call('INCRBY', KEYS[1], ARGV[1])
return {now, now}
