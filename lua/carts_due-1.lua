-- carts_due: the ids of one slot's cluster holds and orders that reap must look at now (read
-- only; cart-2.lua decides what to do with each).
--
-- KEYS[1]  the due index of one slot (a sorted set: id -> server time in ms, written by
--          cart-2.lua)
-- ARGV[1]  at most this many ids
--
-- Returns the ids whose time has come by this node's clock, earliest first.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
