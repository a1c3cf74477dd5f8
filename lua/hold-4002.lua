-- hold: hold or order several items all-or-nothing, once per id (one Redis, or one slot).
--
-- A hold takes its units out of each item's stock at once and keeps them in the item's holds
-- until confirm (sold), release (given back) or expiry (given back by whichever script next
-- touches the item, or by reap). An order deducts its lines for good.
--
-- KEYS[1]  the record of the id (a string, see "The record" below)
-- KEYS[2]  the index of items with holds (a sorted set: stock key -> earliest expiry, ms)
-- then, per line, G keys (G = ARGV[9]): the item's stock key, its holds (a sorted set:
--          hold id -> expiry ms), its held units (a hash: hold id -> qty, "" -> their sum) and,
--          when G = 4, its change log
-- ARGV[1]  kind: "hold" or "order"
-- ARGV[2]  the id
-- ARGV[3]  hold: how long it lasts, in ms
-- ARGV[4]  how long the record (and so the id) is remembered, in seconds
-- ARGV[5]  expiry in seconds for stock keys this call creates; "0" = none
-- ARGV[6]  change log: keep about this many entries; "" = write no log
-- ARGV[7]  change log: actor; ARGV[8]: reason ("" = none)
-- ARGV[9]  G, the keys per line (3, or 4 with the change log)
-- then, per line, 3 arguments: the SKU, the qty (canonical 1 .. 2^53-1), the initial stock to
--          create a missing key with ("" = do not create). Lines name distinct items; the
--          caller merges lines of the same item first and sends them in one order (stockctl:
--          by SKU), so the lines' text in their order is canonical: a repeat that names the same
--          lines in another order is a conflict.
--
-- Returns {replayed, expires_at_ms, code_1, stock_1, code_2, stock_2, ...}: replayed is 0 for a
-- new id, 1 for a repeat whose hold is still held (or an order), and for a repeat of a hold
-- that is no longer held the state it is in ("released", "expired", "confirmed", "cancelled"),
-- so that its answer does not claim units are held; per line the deduction's codes: -3 not
-- initialized (stock -3), -2 insufficient (stock = current), -1 unlimited (stock -1), n >= 0
-- ok (stock = n, after the hold; when another line failed, the current stock). expires_at_ms
-- is the hold's expiry (0 for an order), sent also when a line failed, where it means nothing.
-- Only when every line is ok or unlimited is anything held or deducted, and only then is the
-- id recorded: a refused attempt held nothing and recorded nothing, so the same id may try
-- again. It may still have changed what every touch of an item changes: expired holds given
-- back, and missing keys created from their initial stock (as a deduction creates them). A
-- repeat answers the first attempt's codes from the record, whatever was settled since.
-- Error replies, after which no line is held and no key was created:
--   STOCKCTL_CONFLICT <kind>  the id was used for another kind or other lines (<kind>: this
--                             call's ARGV[1]); also the answer to a tombstone (tombstone-1.lua)
--   STOCKCTL_CORRUPT <i> <value>  line i's stored value is not -1 or a canonical integer
--                                 0 .. 2^53-1
--   STOCKCTL_INVALID <what>   an argument is not what this header says
--
-- The record, one string written with SET ... EX (a new key with its expiry, the least a new
-- id can cost; no hash fields, no JSON):
--   "<state> <expires_at_ms> <stock before, per line>\n<kind>\n<sku>\t<key>\t<qty>\n..."
-- Everything after the first line is the canonical text of the lines that a repeat must
-- match; the first answer is rebuilt from the stocks before (-1: unlimited). settle-4002.lua
-- rewrites the state in place. The record was a hash before it was this string; no release
-- wrote that form, so it is not read: a hash under the id is a tombstone.
--
-- The server's time per cart is the budget (docs/holds.md, "What it costs"). Its common path
-- (a new id, items without holds, no log) is written flat, as stock-2.lua is: no closures (built
-- again on every call), no function of our own called per line, no table but the reply (made at
-- its size for up to 3 lines: a table that grows costs a reallocation each time it doubles), no
-- number turned back into text, the log code only runs with a log, and one EXISTS asks for the
-- id's record and the holds and held units of every line. Items with holds take the same steps per line as
-- every script that touches an item (the expired ones give their units back first:
-- lua/include/give_back_expired.lua). The record is written once every line is checked, before
-- any line changes, so that nothing is changed when Redis refuses it.

local MAX = 9007199254740991
-- Stock and qty are canonical decimals: "-1", "0", or a digit 1-9 and at most 15 more digits
-- (16 digits: at most MAX; Lua numbers are doubles, exact up to 2^53). Such a string's length
-- orders it against another positive one of a different length.
local POSITIVE = '^[1-9]%d*$'
local find, call = string.find, redis.call
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false
local kind, id, G = ARGV[1], ARGV[2], ARGV[9]
if G == '3' then G = 3 elseif G == '4' then G = 4 else G = tonumber(G) end
local log_max = ARGV[6]
local logging = log_max ~= nil and log_max ~= ''

if kind ~= 'hold' and kind ~= 'order' then
  return redis.error_reply('STOCKCTL_INVALID kind ' .. tostring(kind))
end
if G ~= 3 and G ~= 4 then return redis.error_reply('STOCKCTL_INVALID keys per line') end
local n = (#KEYS - 2) / G
if n < 1 or n % 1 ~= 0 or #ARGV ~= 9 + 3 * n then
  return redis.error_reply('STOCKCTL_INVALID line count')
end

-- Every qty before anything else ("1", the most common, needs no pattern).
for i = 1, n do
  local qty = ARGV[8 + 3 * i]
  if qty ~= '1' then
    local len = #qty
    if len == 0 or len > 16 or not find(qty, POSITIVE) or (len == 16 and tonumber(qty) > MAX) then
      return redis.error_reply('STOCKCTL_INVALID qty ' .. qty)
    end
  end
end

-- One EXISTS asks for the id's record and every line's holds and held units (up to 3 lines
-- without a table): a new id on items without holds, the common case, needs no other read
-- before its stocks. (Held units exist only beside holds; one left alone is another program's,
-- and the path for items with holds checks its type before anything changes.)
local found
if n == 1 then
  found = call('EXISTS', KEYS[1], KEYS[4], KEYS[5])
elseif n == 2 then
  found = call('EXISTS', KEYS[1], KEYS[4], KEYS[5], KEYS[4 + G], KEYS[5 + G])
elseif n == 3 then
  found = call('EXISTS', KEYS[1], KEYS[4], KEYS[5], KEYS[4 + G], KEYS[5 + G], KEYS[4 + 2 * G],
      KEYS[5 + 2 * G])
else
  local keys = {KEYS[1]}
  for i = 1, n do
    keys[2 * i], keys[2 * i + 1] = KEYS[4 + G * (i - 1)], KEYS[5 + G * (i - 1)]
  end
  found = call('EXISTS', unpack(keys))
end

if found > 0 then
  -- A repeat: the first answer, rebuilt from the record's stocks before. A record that is not a
  -- string is a tombstone (a hash, tombstone-1.lua: the id's group was aborted), which comes
  -- back as an error table and is refused as a conflict.
  local record = redis.pcall('GET', KEYS[1])
  if record then
    if type(record) == 'table' then return redis.error_reply('STOCKCTL_CONFLICT ' .. kind) end
    local head_end = find(record, '\n', 1, true)
    local canon = {kind}
    for i = 1, n do
      canon[i + 1] = ARGV[7 + 3 * i] .. '\t' .. KEYS[3 + G * (i - 1)] .. '\t' .. ARGV[8 + 3 * i]
    end
    if not head_end or string.sub(record, head_end + 1) ~= table.concat(canon, '\n') then
      return redis.error_reply('STOCKCTL_CONFLICT ' .. kind)
    end
    local out, word_no = {1}, 0
    for word in string.gmatch(string.sub(record, 1, head_end - 1), '%S+') do
      word_no = word_no + 1
      if word_no == 1 and word ~= 'held' and word ~= 'ordered' then
        out[1] = word
      elseif word_no == 2 then
        out[2] = tonumber(word)
        -- Held past its expiry is expired, whether or not a script gave its units back yet.
        if out[1] == 1 and kind == 'hold' then
          local time = call('TIME')
          if tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) >= out[2] then
            out[1] = 'expired'
          end
        end
      elseif word_no > 2 then
        local left = tonumber(word)
        if left ~= -1 then left = left - tonumber(ARGV[8 + 3 * (word_no - 2)]) end
        out[#out + 1] = left
        out[#out + 1] = left
      end
    end
    return out
  end
end
-- Past here, anything found is holds.
local held = found

-- The server's clock in ms, read once and only when needed (an order on items without holds
-- never needs it).
local now

-- Check every line before changing any (expired holds first: their units are available). The
-- stocks before (the initial stock of a key this call creates) are kept for the record: of the
-- first three lines in locals (the last of them in r3), of the rest as text. What is rare
-- takes a table of its own: `created` (keys to create from their initial stock) and
-- `unlimited`.
local r1, r2, r3, befores = nil, nil, nil, ''
local refused, created, unlimited = false, nil, nil
for i = 1, n do
  local k = 2 + G * (i - 1)
  local stock_key, qty = KEYS[k + 1], ARGV[8 + 3 * i]
  if held > 0 then
    -- The item's holds that expired by now give their units back first.
    if not now then
      local time = call('TIME')
      now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    local holds_key, held_key = KEYS[k + 2], KEYS[k + 3]
    -- A key of another type where a hold is written stops the script here, before this line
    -- changes anything (an earlier line's expired holds may have been given back: a change
    -- made whole): past here a WRONGTYPE would come after the stock's DECRBY, and the unit
    -- would be lost. (The holds key is read below; the held units are written only by a hold.)
    if kind == 'hold' then call('HLEN', held_key) end
    local ids = call('ZRANGEBYSCORE', holds_key, '-inf', now)
    if #ids > 0 then
      local log_key, actor, reason = logging and KEYS[k + 4], ARGV[7], ARGV[8]
      -- @include give_back_expired
    end
  end
  local raw = call('GET', stock_key)
  local creating = false
  if not raw then
    local init = ARGV[9 + 3 * i]
    if init ~= nil and init ~= '' then raw, creating = init, true end
  end
  if not raw then
    refused = true
  else
    -- raw_len: 0 stands for -1 (unlimited), "0" is one digit long, false: not a stock value.
    -- @include stock_value
    if not raw_len then
      if creating then return redis.error_reply('STOCKCTL_INVALID initial stock') end
      return redis.error_reply('STOCKCTL_CORRUPT ' .. i .. ' ' .. raw)
    elseif raw_len == 0 then
      unlimited = unlimited or {}
      unlimited[i] = true
    elseif raw_len < #qty or (raw_len == #qty and tonumber(raw) < tonumber(qty)) then
      refused = true
    end
    if creating then
      created = created or {}
      created[i] = true
    end
    if i > 3 then
      befores = befores .. ' ' .. raw
    else
      r1, r2, r3 = r2, r3, raw
    end
  end
end

-- The index is read before the first write (the read the first line of a hold needs anyway):
-- a key of another type there stops the script before it creates or changes anything, not
-- after the first DECRBY.
local earliest_1 = kind == 'hold' and call('ZSCORE', KEYS[2], KEYS[3])

-- Keys created from an init source are created even when another line is short, as a
-- deduction creates them: the item now exists with its initial stock.
if created then
  for i = 1, n do
    if created[i] then
      local k = 2 + G * (i - 1)
      local init = ARGV[9 + 3 * i]
      if tonumber(ARGV[5]) > 0 then
        call('SET', KEYS[k + 1], init, 'EX', ARGV[5])
      else
        call('SET', KEYS[k + 1], init)
      end
      if logging then
        local log_key, log_first, log_batch, log_item, entry_ms =
            KEYS[k + 4], false, false, KEYS[k + 1], false
        local log_who = false
        local actor, reason = ARGV[7], ARGV[8]
        local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
            'init', '', '', init, '', id
        -- @include log_entry
      end
    end
  end
end

local holding = kind == 'hold'
local expires_at = 0
if holding then
  if not now then
    local time = call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  expires_at = now + tonumber(ARGV[3])
end
-- Made at the reply's size for 3 lines (nil ends a reply, so the unused places do not show).
local out = {0, expires_at, nil, nil, nil, nil, nil, nil}

-- Refused: every line's code and current stock (read again: this path is not the budget),
-- nothing held or recorded.
if refused then
  for i = 1, n do
    local raw, code, stock = call('GET', KEYS[3 + G * (i - 1)])
    if not raw then
      code, stock = -3, -3
    else
      stock = tonumber(raw)
      if stock == -1 then
        code = -1
      elseif stock < tonumber(ARGV[8 + 3 * i]) then
        code = -2
      else
        code = stock
      end
    end
    out[2 * i + 1], out[2 * i + 2] = code, stock
  end
  -- A key created from its init source (or an expiry given back) logged nothing: say so. The
  -- caller's repeat reads this refusal again, creating nothing more.
  if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
  return out
end

-- The record outlives the hold: confirm and cancel must find it. Its text is one concatenation
-- for up to 3 lines (each string made on the way costs an allocation, and collecting it).
local head = holding and 'held ' .. expires_at or 'ordered 0'
local text
if n == 1 then
  text = head .. ' ' .. r3 .. '\n' .. kind
      .. '\n' .. ARGV[10] .. '\t' .. KEYS[3] .. '\t' .. ARGV[11]
elseif n == 2 then
  text = head .. ' ' .. r2 .. ' ' .. r3 .. '\n' .. kind
      .. '\n' .. ARGV[10] .. '\t' .. KEYS[3] .. '\t' .. ARGV[11]
      .. '\n' .. ARGV[13] .. '\t' .. KEYS[3 + G] .. '\t' .. ARGV[14]
else
  local more = ''
  for i = 4, n do
    more = more .. '\n' .. ARGV[7 + 3 * i] .. '\t' .. KEYS[3 + G * (i - 1)]
        .. '\t' .. ARGV[8 + 3 * i]
  end
  text = head .. ' ' .. r1 .. ' ' .. r2 .. ' ' .. r3 .. befores .. '\n' .. kind
      .. '\n' .. ARGV[10] .. '\t' .. KEYS[3] .. '\t' .. ARGV[11]
      .. '\n' .. ARGV[13] .. '\t' .. KEYS[3 + G] .. '\t' .. ARGV[14]
      .. '\n' .. ARGV[16] .. '\t' .. KEYS[3 + 2 * G] .. '\t' .. ARGV[17] .. more
end
-- Its lifetime is ARGV[4] as sent, unless a hold outlasts it (or ARGV[4] is not a plain number
-- of seconds, which Redis refuses: then as numbers, as it always was).
local keep = ARGV[4]
local digits = #keep
if ARGV[3] == '0' and (digits > 2 or digits == 2 and keep >= '60') then
  local ok = redis.pcall('SETEX', KEYS[1], keep, text)
  if ok.err then keep = nil end  -- a status reply is {ok = 'OK'}
else
  keep = nil
end
if not keep then
  local least = math.ceil(tonumber(ARGV[3]) / 1000) + 60
  keep = tonumber(ARGV[4])
  if least > keep then keep = least end
  call('SETEX', KEYS[1], keep, text)
end

for i = 1, n do
  local left = -1
  if not (unlimited and unlimited[i]) then
    local k = 2 + G * (i - 1)
    local stock_key, qty = KEYS[k + 1], ARGV[8 + 3 * i]
    left = call('DECRBY', stock_key, qty)
    if logging then
      local log_key, log_first, log_batch, log_item, entry_ms =
          KEYS[k + 4], false, false, stock_key, false
      local log_who = false
      local actor, reason = ARGV[7], ARGV[8]
      local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
          kind, qty, left + tonumber(qty), left, '', id
      -- @include log_entry
    end
    if holding then
      call('ZADD', KEYS[k + 2], expires_at, id)
      call('HSET', KEYS[k + 3], id, qty)
      call('HINCRBY', KEYS[k + 3], '', qty)
      local earliest = earliest_1
      if i > 1 then earliest = call('ZSCORE', KEYS[2], stock_key) end
      if not earliest or tonumber(earliest) > expires_at then
        call('ZADD', KEYS[2], expires_at, stock_key)
      end
    end
  end
  out[2 * i + 1], out[2 * i + 2] = left, left
end
if log_lost then return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost) end
return out
