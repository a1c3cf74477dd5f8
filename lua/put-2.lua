-- put: set one item's stock for init and rebuild, never silently replacing a live value.
--
-- KEYS[1]  the item's stock key
-- KEYS[2]  the item's init lock (same hash slot)
-- ARGV[1]  the value to store: canonical integer 0 .. 2^53-1, or -1 for unlimited
-- ARGV[2]  mode: "create" stores only if the key is missing; "force" always stores;
--          "peek" stores nothing and only reports (dry run)
-- ARGV[3]  expiry in seconds for the stored key; "0" = none (a replaced key keeps its own)
-- ARGV[4]  "1": a missing key held under someone's init lock is left to the lock holder
-- KEYS[3]  the item's change log (a stream, same hash slot); sent only with ARGV[6]
-- ARGV[5]  change log: the change that creates a key ("init" or "rebuild"; a replaced value
--          is logged as "overwrite")
-- ARGV[6]  change log: keep about this many entries; absent or "" = write no log
-- ARGV[7]  change log: actor; ARGV[8]: reason ("" = none)
--
-- Returns {verdict, previous}; previous is the value stored before the call, or nil:
--   "created"   the key was missing and now holds ARGV[1]
--   "kept"      the key exists and was left as it was
--   "replaced"  the key existed and now holds ARGV[1] (mode "force")
--   "absent"    mode "peek" and the key is missing
--   "locked"    the key is missing and its init lock is held: the holder will create it
-- Running as one script makes check-and-create atomic; the init lock is honoured so that a
-- process initializing the item from its own source is not raced.

local previous = redis.call('GET', KEYS[1])
local mode = ARGV[2]

if mode == 'peek' then
  if previous then return {'kept', previous} end
  return {'absent', false}
end
if previous and mode ~= 'force' then return {'kept', previous} end
if not previous and ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  return {'locked', false}
end

local ttl = tonumber(ARGV[3]) or 0
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
else
  -- PTTL and PEXPIRE rather than KEEPTTL, which servers before 6.0 do not know.
  local keep = previous and redis.call('PTTL', KEYS[1]) or -1
  redis.call('SET', KEYS[1], ARGV[1])
  if keep > 0 then redis.call('PEXPIRE', KEYS[1], keep) end
end
if ARGV[6] and ARGV[6] ~= '' and previous ~= ARGV[1] then
  -- The same fields as the stock script's entries ("" = does not apply).
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*', 'change',
             previous and 'overwrite' or ARGV[5], 'qty', '', 'before', previous or '',
             'after', ARGV[1], 'request_id', '', 'actor', ARGV[7], 'reason', ARGV[8])
end
if previous then return {'replaced', previous} end
return {'created', false}
