-- split_bucket: drain one bucket of a split item for a merge or a new split (docs/split.md,
-- "States of a split or merge"): its units leave the bucket and are recorded in its place in
-- the same moment, so a deduction on the bucket either came before (and counted) or finds the
-- drained record, which is not a number (and fails closed: the stock script answers
-- STOCKCTL_CORRUPT, and the caller reads the layout again).
--
-- KEYS[1]  the bucket key (stockctl:bucket:{<tag>}:<stock key>:<gen>:<index>)
-- ARGV[1]  op: "drain"
-- ARGV[2]  the generation of the bucket's layout, kept in the drained record
--
-- Replies: {status, units}:
--   {"ok", <units>}        drained now, or by an earlier try (the record's units): a repeat
--                          answers the same
--   {"missing", false}     no such bucket
--   {"corrupt", <value>}   the bucket holds neither a stock value nor a drained record; left
--                          as it is
-- Error replies: STOCKCTL_INVALID <what>: "op <op>", "generation <gen>".
local MAX = 9007199254740991
local find = string.find

if ARGV[1] ~= 'drain' then return redis.error_reply('STOCKCTL_INVALID op ' .. tostring(ARGV[1])) end
local gen = ARGV[2]
if not (gen and find(gen, '^%x+$')) then
  return redis.error_reply('STOCKCTL_INVALID generation ' .. tostring(gen))
end

local raw = redis.call('GET', KEYS[1])
if not raw then return {'missing', false} end
local units = string.match(raw, '^stockctl:drained:1 %x+ (%d+)$')
if units then return {'ok', units} end
if raw == '0' or (#raw <= 16 and find(raw, '^[1-9]%d*$') and tonumber(raw) <= MAX) then
  redis.call('SET', KEYS[1], 'stockctl:drained:1 ' .. gen .. ' ' .. raw)
  return {'ok', raw}
end
return {'corrupt', raw}
