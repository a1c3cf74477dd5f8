-- load: create the missing stock keys of many items in one call, each with the first entry of
-- its change log (init --file and rebuild with the log, for the keys SET NX would create).
--
-- Per item, 3 keys: its stock key, its change log list and the log of first entries of its hash
-- slot (lua/include/log_entry.lua); on a cluster every item of a call is in one slot.
-- ARGV[1]  expiry in seconds for the keys created; "0" = none
-- ARGV[2]  the logged change: "init" or "rebuild"
-- ARGV[3]  change log: keep about this many entries; ARGV[4]: actor; ARGV[5]: reason ("" = none)
-- then, per item, the value to store (canonical integer 0 .. 2^53-1, or -1), checked by the
-- caller.
--
-- Returns one integer per item: 1 the key was missing and now holds the value (its entry
-- written), 0 the key exists and nothing was written (the caller sends that row to put-2.lua,
-- which gives back its expired holds and reports it).
--
-- Why a batch: with the log, one put-2.lua call per row cost the server about 20 us a row,
-- where --no-log pipelines SET NX; one call for many rows pays the call once. It does what SET
-- NX does (no holds to give back on a missing key, no init lock asked), plus the entry.
local ttl, log_max, actor, reason = ARGV[1], ARGV[3], ARGV[4], ARGV[5]
local out = {}
for i = 1, #KEYS / 3 do
  local key, value = KEYS[3 * i - 2], ARGV[5 + i]
  local created
  if ttl ~= '0' then
    created = redis.call('SET', key, value, 'NX', 'EX', ttl)
  else
    created = redis.call('SET', key, value, 'NX')
  end
  if created then
    local log_key, log_slot, log_field = KEYS[3 * i - 1], KEYS[3 * i], key
    local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
        ARGV[2], '', '', value, '', ''
    -- @include log_entry
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
