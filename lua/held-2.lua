-- held: how many units of one item are in unexpired holds (read only).
--
-- KEYS[1]  the item's holds (a sorted set: hold id -> expiry ms)
-- KEYS[2]  the item's held units (a hash: hold id -> qty, "" -> their sum)
--
-- Returns the units in holds whose expiry is still ahead. Holds that expired and were not yet
-- given back count neither here nor in the stock until the next touch or reap returns them.

local total = tonumber(redis.call('HGET', KEYS[2], '') or '0')
if total <= 0 then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  total = total - tonumber(redis.call('HGET', KEYS[2], id) or '0')
end
return total
