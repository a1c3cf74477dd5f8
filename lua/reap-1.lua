-- reap: give back the units of expired holds, a batch of items at a time (one Redis).
--
-- KEYS[1]  the index of items with holds (a sorted set: stock key -> earliest expiry, ms,
--          written by hold-4002.lua; an entry may be early, never late)
-- ARGV[1]  at most this many items per call
-- ARGV[2]  change log: keep about this many entries; "" = write no log
-- ARGV[3]  change log: actor; ARGV[4]: reason ("" = none)
--
-- The items' own keys (stock, holds, held units, log) are derived from the stock keys in the
-- index, as companion keys are (same hash slot). They are not declared: this script serves a
-- standalone server, where one index names every item with holds.
--
-- Returns {holds, units, more, ids, nowhere, kept}: the holds (ids) expired and the units given back
-- by this call, 1 when items with expired holds may remain (call again), else 0, the ids of those
-- holds, each once (a hold of several lines expires on each of its items; the caller counts
-- the ids of every call once), and {stock key, units, ...} for each item whose stock key was
-- missing (deleted or evicted under its holds): their units, counted in `units`, went nowhere,
-- and the stock keys whose value is not a stock value (their expired holds stay held).

local log_max = ARGV[2]
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false
local logging = log_max ~= nil and log_max ~= ''

-- As companion_key in the tool: keep the key's own hash tag, else wrap the key in one.
local function companion(key, suffix)
  local open = string.find(key, '{', 1, true)
  if open then
    local close = string.find(key, '}', open + 1, true)
    if close and close > open + 1 then return key .. suffix end
  end
  return '{' .. key .. '}' .. suffix
end

-- Gives back the item's expired holds as every script that touches an item does; returns the
-- units given back, and adds the ids of the holds given back to `seen` and `expired`.
local function expire_holds(stock_key, holds_key, held_key, now, seen, expired)
  local ids = redis.call('ZRANGEBYSCORE', holds_key, '-inf', now)
  if #ids == 0 then return 0 end
  local log_key, actor, reason = logging and companion(stock_key, ':changes'), ARGV[3], ARGV[4]
  -- @include give_back_expired
  if not given_back then return 0 end  -- a corrupt value keeps its holds
  for _, hid in ipairs(ids) do
    if not seen[hid] then
      seen[hid] = true
      expired[#expired + 1] = hid
    end
  end
  return given_back
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local units, seen, expired, nowhere, kept = 0, {}, {}, {}, {}
for _, stock_key in ipairs(due) do
  local holds_key = companion(stock_key, ':holds')
  local back = expire_holds(stock_key, holds_key, companion(stock_key, ':held'), now, seen, expired)
  units = units + back
  if back > 0 and redis.call('EXISTS', stock_key) == 0 then
    nowhere[#nowhere + 1] = stock_key
    nowhere[#nowhere + 1] = back
  end
  -- The item's next expiry becomes its score; an item without holds leaves the index. A
  -- corrupt item keeps its expired holds and waits a minute before it is looked at again.
  local next_one = redis.call('ZRANGE', holds_key, 0, 0, 'WITHSCORES')
  if #next_one == 0 then
    redis.call('ZREM', KEYS[1], stock_key)
  elseif tonumber(next_one[2]) <= now then
    redis.call('ZADD', KEYS[1], now + 60000, stock_key)
    kept[#kept + 1] = stock_key
  else
    redis.call('ZADD', KEYS[1], next_one[2], stock_key)
  end
end
if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
return {#expired, units, #due == limit and 1 or 0, expired, nowhere, kept}
