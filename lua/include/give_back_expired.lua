-- give_back_expired: an item's expired holds give their units back to its stock. Every script
-- that touches an item takes these steps first (stock-2, put-2, hold-4002, settle-4002, reap-1,
-- split_item-4): each has the include line naming this file where they go, and lua/embed.cmake
-- splices this text there at build time. It is text, not a function: it runs only where holds
-- have expired, and costs a path that does not reach it nothing, where a function of the script
-- would be a closure built on every call.
--
-- Reads these locals of the script it is spliced into:
--   stock_key  the item's stock key
--   holds_key  its holds (a sorted set: hold id -> expiry ms)
--   held_key   its held units (a hash: hold id -> qty, "" -> their sum)
--   ids        the ids that ZRANGEBYSCORE holds_key -inf now found (at least one)
--   now        the server's clock in ms that found them
--   log_key    the item's change log (a list); nil or false: write no log
--   log_max    the log's length; actor, reason: the entries' fields (lua/include/log_entry.lua,
--              which this file includes: an expiry's entry goes to the item's list)
-- Defines given_back: the units given back, or false when the stored value is not a stock value
-- (lua/include/stock_value.lua, which this file includes too: -1 or a canonical integer
-- 0 .. 2^53-1), which keeps its holds until it is repaired. A missing key takes them with it
-- (they count as given back); unlimited stock stays as it is.
local given_back = false
do
  local raw = redis.call('GET', stock_key)
  local stock
  if raw then
    local find = string.find
    -- @include stock_value
    if raw_len then stock = tonumber(raw) end
  end
  if stock or not raw then
    local units = 0
    for j = 1, #ids do
      local hid = ids[j]
      local qty = tonumber(redis.call('HGET', held_key, hid) or '0')
      units = units + qty
      redis.call('HDEL', held_key, hid)
      if log_key and stock and stock >= 0 then
        local log_first, log_batch, log_item, entry_ms, log_who =
            false, false, stock_key, false, false
        local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
            'expire', qty, stock + units - qty, stock + units, '', hid
        -- @include log_entry
      end
    end
    redis.call('ZREMRANGEBYSCORE', holds_key, '-inf', now)
    if redis.call('HINCRBY', held_key, '', -units) <= 0 then redis.call('DEL', held_key) end
    if stock and stock >= 0 then redis.call('INCRBY', stock_key, units) end
    given_back = units
  end
end
