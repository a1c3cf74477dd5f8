-- log_entry: append one entry to an item's change log. Every script that logs a change has the
-- include line naming this file where the entry goes (stock-2, put-2, hold-4002, settle-4002,
-- and give_back_expired for reap-1 and the others); lua/embed.cmake splices this text there.
--
-- Reads these locals of the script it is spliced into:
--   log_key     the item's log list (<stock key>:changes, a list; same hash slot)
--   log_slot    the log of first entries shared by the items of the slot (a hash of stock key
--               -> entry; same hash slot), or false: only the script that creates keys from
--               a load (put-2) passes it
--   log_field   the item's field in log_slot (its stock key)
--   log_max     keep about this many entries in log_key (a decimal string)
--   actor, reason                     the entry's who and why ("" = no reason)
--   entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold
--               the change and its numbers and ids ("" = does not apply)
-- Defines nothing outside its own block.
--
-- Layout and why. A stream per item preallocates a node of about 4 KB, so a load of N items
-- cost 60 times the stock itself. The first entry of an item created by a load goes into the
-- slot's hash instead (a small hash is one compact listpack: some 80 bytes an item), and every
-- later entry into the item's own list (about 60 bytes an entry once the list exists). An
-- entry is one string: "<ms>-<n>" US change US qty US before US after US request US hold US
-- <bytes of actor> US actor reason (US = \31). n counts the item's entries: 0 for the slot
-- hash's, 1 and up in the list, so the id is unique and ordered even within a millisecond;
-- the actor's length makes the two free texts unambiguous. The list is trimmed when RPUSH
-- says it passed log_max by a tenth (at least one), LTRIM being cheapest done seldom.
do
  local last = redis.call('LINDEX', log_key, -1)
  local n = last and (tonumber(string.match(last, '^%d+%-(%d+)')) or 0) + 1 or 1
  local t = redis.call('TIME')
  local ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
  local body = '\31' .. entry_change .. '\31' .. entry_qty .. '\31' .. entry_before .. '\31'
      .. entry_after .. '\31' .. entry_request .. '\31' .. entry_hold .. '\31' .. #actor
      .. '\31' .. actor .. reason
  if last or not log_slot or redis.call('HSETNX', log_slot, log_field, ms .. '-0' .. body) == 0 then
    local len = redis.call('RPUSH', log_key, ms .. '-' .. n .. body)
    local keep = tonumber(log_max)
    if len > keep + math.max(1, math.floor(keep / 10)) then
      redis.call('LTRIM', log_key, -keep, -1)
    end
  end
end
