-- held_view: one item's held units as get and export show them (and as delete checks them),
-- with the stock read in the same moment when an expired hold is not yet given back (read only:
-- it writes nothing, so it runs on replicas and for users without write rights).
--
-- KEYS[1]  the item's holds (a sorted set: hold id -> expiry ms)
-- KEYS[2]  the item's held units (a hash: hold id -> qty, "" -> their sum)
-- KEYS[3]  the item's stock key (same hash slot)
--
-- Returns the units in holds whose expiry is still ahead (an integer) while no
-- hold has expired unreturned; otherwise {held, expired, value}: the units in unexpired holds,
-- the units of holds that expired and were not yet given back (the next touch or reap puts them
-- onto the stock), and the stock key's value read in the same moment (nil when missing; left
-- out when it cannot be read as a string, and the caller's own GET tells why). The logical
-- stock is value + expired. An item without holds costs one HGET.

local total = tonumber(redis.call('HGET', KEYS[2], '') or '0')
if total <= 0 then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expired = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  expired = expired + tonumber(redis.call('HGET', KEYS[2], id) or '0')
end
if expired == 0 then return total end
local value = redis.pcall('GET', KEYS[3])
if type(value) == 'table' then return {total - expired, expired} end
return {total - expired, expired, value}
