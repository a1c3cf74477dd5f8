-- put: set one item's stock for init and rebuild, never silently replacing a live value.
--
-- KEYS[1]  the item's stock key
-- KEYS[2]  the item's init lock (same hash slot)
-- ARGV[1]  the value to store: canonical integer 0 .. 2^53-1, or -1 for unlimited (checked by
--          the caller: this script stores what it is given)
-- ARGV[2]  mode: "create" stores only if the key is missing; "force" always stores;
--          "peek" stores nothing and only reports (dry run)
-- ARGV[3]  expiry in seconds for the stored key; "0" = none (a replaced key keeps its own)
-- ARGV[4]  "1": a missing key held under someone's init lock is left to the lock holder
-- ARGV[5]  "1": ARGV[1] counts the item's held units as not sold (a database's total - issued):
--          the value stored is ARGV[1] less the units of its live holds, never below 0 (see
--          "Holds" below); "0": ARGV[1] is stored as it is
-- KEYS[3]  the item's change log (a list, same hash slot); sent only with ARGV[7]
-- KEYS[4]  the item's first log entry (<stock key>:first, a string, same slot); sent with
--          KEYS[3]. A key this call creates without an expiry has its first entry there, not
--          in a list of its own (lua/include/log_entry.lua).
-- KEYS[5]  the hash of first entries of the items of its slot (stockctl:log:{<tag>}), where
--          earlier versions put them; sent with KEYS[3] when ARGV[3] gives an expiry. A key
--          given an expiry keeps its whole log in its list and first key, which expire with
--          it: its entry in KEYS[5], if any, moves to the head of the list.
-- ARGV[6]  change log: the change that creates a key ("init" or "rebuild"; a replaced value
--          is logged as "overwrite")
-- ARGV[7]  change log: keep about this many entries; absent or "" = write no log
-- ARGV[8]  change log: actor; ARGV[9]: reason ("" = none)
--
-- Returns {verdict, previous, held}; previous is the stock value before the call (after the
-- expired holds went back to it; in mode "peek", with their units counted on it), or nil;
-- held is the units of live holds left out of the value (ARGV[5] = "1"; else, and for
-- unlimited, 0). The value is ARGV[1] - held:
--   "created"   the key was missing and now holds the value
--   "kept"      the key exists and was left as it was (mode "create", and "peek"; in every
--               mode a split item's layout record, which previous then is)
--   "replaced"  the key existed and now holds the value (mode "force")
--   "absent"    mode "peek" and the key is missing
--   "locked"    the key is missing and its init lock is held: the holder will create it
-- No error reply of its own (a key of another type gives Redis's WRONGTYPE).
-- Running as one script makes check-and-create atomic; the init lock is honoured so that a
-- process initializing the item from its own source is not raced.
--
-- Holds. Before anything else, expired holds give their units back, as in every script that
-- touches the item (lua/include/give_back_expired.lua, as in stock-2.lua's holds hook; a dry
-- run gives nothing back); on a missing key they go with it. Held units are in the item's
-- `:held` hash, not in its stock; a database's total - issued counts them as not sold, so
-- storing it as it is would count them twice once the holds are released or expire: with
-- ARGV[5] = "1" they are left out. A
-- cluster's holds (slot groups) never expire here (their expiry is ten years away; `reap` ends
-- them), so all of their units count as held until reap or release puts them back onto the
-- stored value. The holds keys are companions of KEYS[1] (same hash slot) and not declared, as
-- in stock-2.lua.

local find = string.find
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false
local key = KEYS[1]
local mode = ARGV[2]
local log_max = ARGV[7]
local logging = mode ~= 'peek' and log_max and log_max ~= ''

local holds_base = key
do
  local open = find(key, '{', 1, true)
  local close = open and find(key, '}', open + 1, true)
  if not (close and close > open + 1) then holds_base = '{' .. key .. '}' end
end
local holds_key, held_key = holds_base .. ':holds', holds_base .. ':held'
local held = 0
local expired = 0  -- a dry run's units of expired holds, which it does not give back
if redis.pcall('EXISTS', holds_key) == 1 then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local ids = redis.call('ZRANGEBYSCORE', holds_key, '-inf', now)
  if mode == 'peek' then
    for _, hid in ipairs(ids) do
      expired = expired + tonumber(redis.call('HGET', held_key, hid) or '0')
    end
  elseif #ids > 0 then
    -- A corrupt value keeps its holds until it is repaired (a forced write counts them as held
    -- below; the next touch then gives them back onto the new value); a missing key takes them
    -- with it.
    local stock_key, log_key, actor, reason = key, logging and KEYS[3], ARGV[8], ARGV[9]
    -- @include give_back_expired
  end
  if ARGV[5] == '1' then
    held = tonumber(redis.call('HGET', held_key, '') or '0') - expired
    if held < 0 then held = 0 end
  end
end

local previous = redis.call('GET', key)
-- A dry run gives nothing back: its previous value is the stock as the real run will find it,
-- with the expired holds' units on it (a missing key, unlimited stock or a value that is not a
-- stock keeps them out, as the hook does).
if expired > 0 and previous then
  local raw = previous
  -- @include stock_value
  if raw_len and raw_len > 0 then previous = string.format('%d', tonumber(previous) + expired) end
end
local value = ARGV[1]
if value == '-1' then
  held = 0
elseif held > 0 then
  local n = tonumber(value) - held
  value = n > 0 and string.format('%d', n) or '0'
end

if mode == 'peek' then
  if previous then return {'kept', previous, held} end
  return {'absent', false, held}
end
-- A split item's stock key holds its layout record, its units being in its buckets: a forced
-- write would leave them behind. stockctl reads the key first and refuses a split item; this
-- covers a split that began after that read. The caller tells "kept" with a record from a kept
-- number (docs/split.md).
if previous and (previous == 'stockctl:split:1' or find(previous, '^stockctl:split:1 ')) then
  return {'kept', previous, held}
end
if previous and mode ~= 'force' then return {'kept', previous, held} end
if not previous and ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  return {'locked', false, held}
end

local ttl = tonumber(ARGV[3]) or 0
if ttl > 0 then
  redis.call('SET', key, value, 'EX', ARGV[3])
else
  -- PTTL and PEXPIRE rather than KEEPTTL, which servers before 6.0 do not know.
  local keep = previous and redis.call('PTTL', key) or -1
  redis.call('SET', key, value)
  if keep > 0 then redis.call('PEXPIRE', key, keep) end
end
if logging and previous ~= value then
  -- The same fields as the stock script's entries ("" = does not apply). A key with an expiry
  -- keeps its first entry in its own list, which expires with it.
  local log_key, log_first, log_item = KEYS[3], not previous and ttl == 0 and KEYS[4], key
  local entry_ms, log_who, log_batch = false, false, false
  local actor, reason = ARGV[8], ARGV[9] or ''
  local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
      previous and 'overwrite' or ARGV[6], '', previous or '', value, '', ''
  -- @include log_entry
end
-- An item given an expiry takes its log with it: its entry in an earlier version's slot hash
-- (which has no expiry per field) moves to the head of its list, and the list and its first
-- key expire with it. The value is written already: a key of another type here must not stop
-- the script (it is not rolled back), so the reads are pcalls, and a list of another type
-- (another program's: it gets no entry and no expiry from us) is reported as the entries' are.
if logging and ttl > 0 and not log_lost and type(redis.pcall('LLEN', KEYS[3])) ~= 'number' then
  log_lost = KEYS[3]
end
if logging and ttl > 0 and not log_lost then
  local first = KEYS[5] and redis.pcall('HGET', KEYS[5], key)
  if type(first) == 'string' then
    redis.call('LPUSH', KEYS[3], first)
    redis.call('HDEL', KEYS[5], key)
  end
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
if logging and ttl > 0 then
  -- Only a first entry (it holds the separator; a stock value never does): under a prefix with
  -- a hash tag and no braces of ours, an earlier version may have let an item be named so.
  local first_entry = redis.pcall('GET', KEYS[4])
  if type(first_entry) == 'string' and string.find(first_entry, '\31', 1, true) then
    redis.call('EXPIRE', KEYS[4], ARGV[3])
  end
end
if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
if previous then return {'replaced', previous, held} end
return {'created', false, held}
