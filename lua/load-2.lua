-- load: create the missing stock keys of many items in one call, each with the first entry of
-- its change log (init with the log, for the keys SET NX would create; rebuild creates keys
-- with put-2, under their init locks).
--
-- Per item, 2 keys: its stock key and its first entry's key (<stock key>:first, a string in
-- the same hash slot; lua/include/log_entry.lua). The item's log list (<stock key>:changes,
-- same slot) is derived from the stock key when an entry goes there: not sent, as most rows
-- never need it.
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
-- NX does (no holds to give back on a missing key, no init lock asked), plus the entry. On a
-- fresh load the entries cost no command of their own: one MSETNX writes every stock key and
-- every first entry of the call. The clock is read once per call (every entry of a call has
-- its time), the actor and reason are packed once, and the list is neither sent nor read
-- unless the item has a first entry already. A key with an expiry keeps its first entry in its
-- own list instead, which expires with it.
local ttl, log_max, actor, reason = ARGV[1], ARGV[3], ARGV[4], ARGV[5]
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false
local t = redis.call('TIME')
local entry_ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
local log_key, log_who = false, false
local rows = #KEYS / 2
local entry_change, entry_qty, entry_before, entry_request, entry_hold = ARGV[2], '', '', '', ''
-- A fresh load finds none of its keys: one MSETNX creates them all, stock keys and first
-- entries (it sets every key or none), where a command per row would pay a command's own cost
-- once per row. Any key there already, or an expiry, which MSETNX cannot give: a SET NX per
-- row, and each entry written on its own.
local all_created = false
if ttl == '0' then
  local log_batch = {}
  for i = 1, rows do
    local log_item, log_first, entry_after = KEYS[2 * i - 1], KEYS[2 * i], ARGV[5 + i]
    log_batch[4 * i - 3], log_batch[4 * i - 2] = log_item, entry_after
    -- @include log_entry
  end
  all_created = redis.call('MSETNX', unpack(log_batch)) == 1
end
local out = {}
for i = 1, rows do
  local key, value = KEYS[2 * i - 1], ARGV[5 + i]
  local created = all_created
  if not created and ttl ~= '0' then
    created = redis.call('SET', key, value, 'NX', 'EX', ttl)
  elseif not created then
    created = redis.call('SET', key, value, 'NX')
  end
  if created and not all_created then
    local log_item, log_first, log_batch, entry_after = key, ttl == '0' and KEYS[2 * i], false, value
    -- @include log_entry
  end
  out[i] = created and 1 or 0
end
-- Each row's answer stands (an error would hide which rows were created); the list that
-- could not take an entry follows them.
if log_lost then out[#out + 1] = log_lost end
return out
