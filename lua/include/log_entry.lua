-- log_entry: append one entry to an item's change log. Every script that logs a change has the
-- include line naming this file where the entry goes (stock-2, put-2, load-2, hold-4002,
-- settle-4002, and give_back_expired for reap-1 and the others); lua/embed.cmake splices this
-- text there.
--
-- Reads these locals of the script it is spliced into:
--   log_item    the item's stock key
--   log_key     the item's log list (<stock key>:changes, a list; same hash slot), or false:
--               derived from log_item when the entry goes there (a load does not send it:
--               its entries go to the items' first keys)
--   log_first   the item's first entry (<stock key>:first, a string; same hash slot), or
--               false: only the scripts that create keys from a load or a rebuild (load-2,
--               put-2) pass it, and only for a key without expiry
--   log_batch   false, or a table (load-2): the entry for log_first is not written but its key
--               and text are appended to the table, for the MSETNX that creates the load's
--               stock keys and first entries together
--   log_max     keep about this many entries in the list (a decimal string)
--   actor, reason                     the entry's who and why ("" = no reason)
--   log_who     false, or actor and reason as packed below, set here: a script that writes many
--               entries declares it once, and packs them once (the actor's length turned into
--               text costs a printf, about a tenth of a load's row)
--   entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold
--               the change and its numbers and ids ("" = does not apply)
--   entry_ms    the server's time in ms (a string), or false: read here (a script that writes
--               many entries reads the clock once)
-- Defines nothing outside its own block; sets log_who, and log_lost (a local every script that
-- includes this file declares, false at first) to the list's name when that key holds another
-- type: the entry is not written, and the script ends with STOCKCTL_LOG_LOST <list> once its
-- change is whole.
--
-- Layout and why. A stream per item preallocates a node of about 4 KB, so a load of N items
-- cost 60 times the stock itself. The first entry of an item created by a load goes into a
-- string key of its own instead (some 130 bytes an item), which the load's one MSETNX writes
-- with the stock keys: an entry per row written by its own command cost a load three times the
-- time of --no-log's SET NX (docs/benchmarks.md). Every later entry goes into the item's own
-- list (about 60 bytes an entry once the list exists). An entry in the list is one string:
-- "<ms>-<n>" US change US qty US before US after US request US hold US <bytes of actor> US
-- actor reason (US = \31). n counts the item's entries: 0 for the first key's, 1 and up in the
-- list, so the id is unique and ordered even within a millisecond; the actor's length makes
-- the two free texts unambiguous. The first key holds "<ms>" US change US after US <bytes of
-- actor> US actor reason: a created key has no qty, before, request or hold, and a string of
-- at most 44 bytes is stored with its object in one allocation, 16 bytes less an item. The first entry is written without looking at the list (a load creates
-- many keys, and a read per key would cost as much as the entry): it is the item's first
-- unless the key was lost while its log stayed (an eviction, a DEL by another program), and
-- readers place it by its time; when a first entry is there already, the new one goes to the
-- list. Earlier versions kept first entries in a hash per slot (stockctl:log:{<tag>}): read
-- and deleted, never written. The list is trimmed when RPUSH says it passed log_max by a tenth
-- (at least one), LTRIM being cheapest done seldom. A list takes the item's expiry when it is
-- created, so that the log of an item with an expiry goes with it.
do
  local ms = entry_ms
  if not ms then
    local t = redis.call('TIME')
    ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
  end
  if not log_who then log_who = '\31' .. #actor .. '\31' .. actor .. reason end
  local first = log_first and ms .. '\31' .. entry_change .. '\31' .. entry_after .. log_who
  if first and log_batch then
    local n = #log_batch
    log_batch[n + 1], log_batch[n + 2] = log_first, first
  elseif not first or not redis.call('SET', log_first, first, 'NX') then
    local body = '\31' .. entry_change .. '\31' .. entry_qty .. '\31' .. entry_before .. '\31'
        .. entry_after .. '\31' .. entry_request .. '\31' .. entry_hold .. log_who
    local list = log_key
    if not list then
      -- As companion_key in the tool: the key's own hash tag, else the key wrapped in one.
      local open = string.find(log_item, '{', 1, true)
      local close = open and string.find(log_item, '}', open + 1, true)
      if close and close > open + 1 then
        list = log_item .. ':changes'
      else
        list = '{' .. log_item .. '}:changes'
      end
    end
    -- The list's first command is a pcall: a key of another type there (another program's)
    -- must not stop the script halfway through its change (scripts are not rolled back). The
    -- entry is skipped, the change goes on, and the script answers STOCKCTL_LOG_LOST at its end.
    local last = redis.pcall('LINDEX', list, -1)
    if type(last) == 'table' and last.err then
      log_lost = log_lost or list
    else
      local n = last and (tonumber(string.match(last, '^%d+%-(%d+)')) or 0) + 1 or 1
      local len = redis.call('RPUSH', list, ms .. '-' .. n .. body)
      local keep = tonumber(log_max)
      if len == 1 then
        local ttl = redis.call('PTTL', log_item)
        if ttl > 0 then redis.call('PEXPIRE', list, ttl) end
      elseif len > keep + math.max(1, math.floor(keep / 10)) then
        redis.call('LTRIM', list, -keep, -1)
      end
    end
  end
end
