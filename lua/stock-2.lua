-- stock: deduct or add QTY units of one item's stock, atomically. A deduction never takes the
-- stock below zero; unlimited stock (-1) never changes.
--
-- KEYS[1]  the item's stock key
-- KEYS[2]  only with an id: the item's ledger of the current generation (a hash, same hash
--          slot; see "The ledger" below). A call without an id sends KEYS[1] alone (numkeys 1),
--          so that on a cluster it stays a single-key command that follows ASK while its slot
--          migrates.
-- KEYS[3]  only with an id: the item's ledger of the previous generation
-- KEYS[4]  only with an id: the item's ledger of the next generation
-- KEYS[#]  the item's change log (a list, same hash slot; lua/include/log_entry.lua), last;
--          sent only with ARGV[7]
-- ARGV[1]  op: "deduct" or "add"
-- ARGV[2]  qty: canonical decimal integer, 1 .. 2^53-1
-- ARGV[3]  request id; absent or "" = none. With an id the operation is applied at most once: a
--          repeat returns the first answer with replayed = 1, a repeat with another op or QTY is
--          refused
-- ARGV[4]  with an id: the lifetime of a generation's ledger, in seconds (twice the
--          generation's length)
-- ARGV[5]  initial stock to create a missing key with (canonical, -1 = unlimited); absent or
--          "" = do not create. add puts QTY on top of it.
-- ARGV[6]  expiry in seconds for a key this call creates; absent or "0" = none
-- ARGV[7]  change log: keep about this many entries; absent or "" = write no log
-- ARGV[8]  change log: who made the change (actor)
-- ARGV[9]  change log: why ("" = no reason)
-- ARGV[10] "short-unrecorded": a deduction with an id that finds too little answers
--          {-2, stock, 0} without recording the id, which may then try again (a split item's
--          bucket, whose buckets together may still cover QTY; docs/split.md); absent = record it
-- Trailing arguments that are absent or "" may be left out: a plain deduction sends ARGV[1..2].
--
-- The answer is the classic design's:
--   -3     not initialized: the key is missing and no initial stock was given
--   -2     insufficient (deduct): nothing changed
--   -1     unlimited: the stored value is -1; nothing changed
--   n >= 0 the stock after the operation
-- Returns the answer alone (an integer) when the stock is the answer itself and the call was
-- not a replay, and otherwise {answer, stock, replayed}: insufficient gives {-2, stock, 0}, a
-- repeated request id {answer, stock, 1}.
-- Error replies, after which nothing has changed (but the item's expired holds, given back
-- before the stock is read, which changes no logical stock):
--   STOCKCTL_CONFLICT <record>  the request id was used for another op or QTY on this item
--                               (<record>: the id's ledger record, "<op> <qty> <before>[ -2]")
--   STOCKCTL_CORRUPT <value>    the stored value is not -1 or a canonical integer 0 .. 2^53-1
--   STOCKCTL_OVERFLOW <stock>   add: the sum would pass 2^53-1, where Lua numbers stop being exact
--   STOCKCTL_INVALID <what>     an argument is not what this header says: "op <op>", "qty
--                               <qty>", "initial stock <value>", or "a request id needs the
--                               ledger keys and lifetime"
--
-- The server's time per call is the budget on a hot item, so the common path is written flat:
-- no closures (built again on every call), no tonumber (two strtod calls each) unless two
-- numbers of the same length must be compared, and the ledger and log code only runs when
-- their arguments are given.
--
-- The ledger. Time is cut into generations of --request-ttl seconds (counted from the Unix
-- epoch); the caller names the item's ledger of the current generation (KEYS[2]), of the
-- previous one (KEYS[3]) and of the next one (KEYS[4]), hashes of request id -> record. A
-- request is recorded in the current generation's ledger only, and looked up in all three:
-- every id recorded less than --request-ttl seconds ago is in the current or the previous one,
-- and the next one is where a caller whose clock runs ahead (by less than a generation)
-- recorded it: the generation comes from the caller's clock, so that the script stays
-- deterministic, and machines that repeat each other's ids need not agree to the second.
-- HSETNX is both the lookup in the current generation and the write: the record is known
-- before anything changes (it holds the stock before the change), and a field that is there
-- already is a repeat. One EXISTS tells whether the current and the next generation's ledgers
-- exist: the next one (usually missing) is then looked up only when it exists, and the script
-- that creates the current one gives it its expiry in the same call, ARGV[4] seconds (two
-- generations), so every record lives at least --request-ttl seconds and the expiry is set
-- once per generation. The field "" is written with the first record, and chooses the ledger's
-- encoding. Redis keeps a small hash as a listpack (up to hash-max-listpack-entries fields, 512
-- by default), which every lookup searches field by field, and HSETNX twice: with a few hundred
-- ids that search costs the server more than the rest of the call (docs/benchmarks.md, "The
-- request id's path"). The field's value is LEDGER_MARK, longer than hash-max-listpack-value
-- (64 bytes by default), which makes the hash a hash table at once; unless the previous
-- generation's ledger exists and holds fewer than SMALL_LEDGER fields: then it is "", and the
-- ledger a listpack, which takes half the memory per id and is quick to search while it stays
-- that small. Ledgers of earlier versions hold "" -> "" too.
-- Records: "<op> <qty> <stock before>" when applied or unlimited, "<op> <qty> <stock> -2"
-- when insufficient. Not initialized is not recorded. A record that `split` carried from a
-- split item's bucket to another layout ends in " c": its stock is the bucket's, not the item's,
-- so a repeat answers its status with the item's stock now (as a repeat on a split item
-- answers the total at the repeat), or with the recorded stock while the key is missing.
--
-- A record is one hash field in a key that already exists, instead of a key per request with
-- its own expiry: creating a key with an expiry costs the server more than the rest of the
-- call (docs/benchmarks.md).
local MAX = 9007199254740991
-- Stock and QTY are canonical decimals: "-1", "0", or a digit 1-9 and at most 15 more digits
-- (16 digits: at most MAX; Lua numbers are doubles, exact up to 2^53). Such a string's length
-- orders it against another positive one of a different length.
local POSITIVE = '^[1-9]%d*$'
-- The ledger's field "" (see "The ledger" above): a value longer than hash-max-listpack-value,
-- and the size of a previous ledger below which the next one stays a listpack.
local LEDGER_MARK = 'stockctl request ledger; this value is longer than 64 bytes: a hash table'
local SMALL_LEDGER = 32
local find = string.find
-- A change log entry not written (lua/include/log_entry.lua): the list's name.
local log_lost = false

local key, op, qty = KEYS[1], ARGV[1], ARGV[2]
local request_id, log_max = ARGV[3], ARGV[7]
local ledger = request_id and request_id ~= '' and KEYS[2]
if ledger and not (KEYS[4] and ARGV[4]) then
  return redis.error_reply('STOCKCTL_INVALID a request id needs the ledger keys and lifetime')
end
local logging = log_max and log_max ~= ''
-- Checked before anything changes: the log's trim reads it after the change (an application
-- that sent 0 got a Redis error with the units already added).
if logging and not (#log_max <= 13 and find(log_max, '^[1-9]%d*$')) then
  return redis.error_reply('STOCKCTL_INVALID log ' .. log_max)
end

if op ~= 'deduct' and op ~= 'add' then
  return redis.error_reply('STOCKCTL_INVALID op ' .. tostring(op))
end
local qty_len = qty and #qty or 0
if qty_len == 0 or qty_len > 16 or not find(qty, POSITIVE)
    or (qty_len == 16 and tonumber(qty) > MAX) then
  return redis.error_reply('STOCKCTL_INVALID qty ' .. tostring(qty))
end

-- Holds hook: the item's expired holds give their units back before anything reads the stock
-- (see hold-4002.lua, which writes them; the steps are lua/include/give_back_expired.lua, the
-- same in every script that touches an item). An item without holds costs one EXISTS. The holds
-- keys are companions of KEYS[1] (same hash slot) and deliberately not declared: a call without
-- id and log must stay a single-key command (see KEYS[2]). While the slot migrates, a node
-- that runs this call after ASK refuses an undeclared key it does not hold yet: pcall turns
-- that into "no holds here", and the next touch or reap returns them.
local holds_base = key
do
  local open = find(key, '{', 1, true)
  local close = open and find(key, '}', open + 1, true)
  if not (close and close > open + 1) then holds_base = '{' .. key .. '}' end
end
if redis.pcall('EXISTS', holds_base .. ':holds') == 1 then
  local stock_key, holds_key, held_key = key, holds_base .. ':holds', holds_base .. ':held'
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local ids = redis.call('ZRANGEBYSCORE', holds_key, '-inf', now)
  if #ids > 0 then
    local log_key, actor, reason = logging and KEYS[#KEYS], ARGV[8], ARGV[9]
    -- @include give_back_expired
  end
end
-- End of the holds hook.

local raw = redis.call('GET', key)
local creating = false
-- An answer that applies nothing and is not recorded; with an id, a recorded first answer
-- comes before it.
local refusal
if not raw then
  raw = ARGV[5] or ''
  -- "Not initialized" is not recorded: nothing was applied, and a retry that brings an init
  -- source must be able to proceed.
  if raw == '' then refusal = -3 end
  creating = true
end

-- raw_len: 0 stands for -1 (unlimited), "0" is one digit long, false: not a stock value.
-- @include stock_value
if not (raw_len or refusal) then
  local what = creating and 'STOCKCTL_INVALID initial stock ' or 'STOCKCTL_CORRUPT '
  refusal = redis.error_reply(what .. raw)
  -- A split item's layout record (docs/split.md): its ids are in its buckets' ledgers, where
  -- split carried them. A record left in this key's ledger from before the split would answer
  -- with the stock of that moment, so the caller is sent to the buckets first.
  if not creating and find(raw, '^stockctl:split:') then return refusal end
end
-- Both are at most 2^53-1 and below 10^15 unless 16 digits long, so a sum that may pass MAX has
-- a 16-digit side, and a true sum above MAX never rounds down to MAX or below.
if not refusal and op == 'add' and raw_len > 0 and (raw_len == 16 or qty_len == 16)
    and tonumber(raw) + tonumber(qty) > MAX then
  refusal = redis.error_reply('STOCKCTL_OVERFLOW ' .. raw)
end

-- With an id: record it (see "The ledger" above), or answer its first record.
if ledger then
  local rec
  local short = not refusal and op == 'deduct' and raw_len > 0
      and (raw_len < qty_len or (raw_len == qty_len and tonumber(raw) < tonumber(qty)))
  -- A split item's bucket that finds too little refuses without recording the id (ARGV[10],
  -- read only when short, so that no other call pays for it); a first record still answers.
  if short and ARGV[10] == 'short-unrecorded' then refusal = {-2, tonumber(raw), 0} end
  if refusal then
    rec = redis.call('HGET', ledger, request_id) or redis.call('HGET', KEYS[3], request_id)
        or redis.call('HGET', KEYS[4], request_id)
  else
    rec = op .. ' ' .. qty .. ' ' .. raw
    if short then rec = rec .. ' -2' end
    -- 2 if the current generation's ledger exists, plus 1 if the next one does.
    local ledgers = redis.call('EXISTS', ledger, ledger, KEYS[4])
    local first = redis.call('HGET', KEYS[3], request_id)
    if not first and ledgers % 2 == 1 then first = redis.call('HGET', KEYS[4], request_id) end
    if first then
      rec = first
    elseif ledgers < 2 then
      local before = redis.call('HLEN', KEYS[3])
      local mark = (before > 0 and before < SMALL_LEDGER) and '' or LEDGER_MARK
      redis.call('HSET', ledger, request_id, rec, '', mark)
      redis.call('EXPIRE', ledger, ARGV[4])
      rec = nil
    elseif redis.call('HSETNX', ledger, request_id, rec) == 1 then
      rec = nil
    else
      rec = redis.call('HGET', ledger, request_id)
    end
  end
  if rec then
    local carried = find(rec, ' c$')
    local rop, rqty, before, short =
        string.match(carried and rec:sub(1, -3) or rec, '^(%a+) (%d+) (%-?%d+)( ?%-?%d*)$')
    if rop ~= op or rqty ~= qty then return redis.error_reply('STOCKCTL_CONFLICT ' .. rec) end
    local stock = tonumber(before)
    local now = carried and not creating and raw_len and (raw_len == 0 and -1 or tonumber(raw))
    if short ~= '' then return {-2, now or stock, 1} end
    if now then return {now, now, 1} end
    if stock == -1 then return {-1, -1, 1} end
    if op == 'add' then stock = stock + tonumber(qty) else stock = stock - tonumber(qty) end
    return {stock, stock, 1}
  end
end
if refusal then return refusal end

if creating then
  if (tonumber(ARGV[6]) or 0) > 0 then
    redis.call('SET', key, raw, 'EX', ARGV[6])
  else
    redis.call('SET', key, raw)
  end
end

-- The answer and the stock after it. INCRBY and DECRBY do the arithmetic on Redis integers,
-- never on doubles.
local answer, stock
if raw_len == 0 then
  answer, stock = -1, -1
elseif op == 'add' then
  answer = redis.call('INCRBY', key, qty)
  stock = answer
elseif raw_len < qty_len or (raw_len == qty_len and tonumber(raw) < tonumber(qty)) then
  answer, stock = -2, tonumber(raw)
else
  answer = redis.call('DECRBY', key, qty)
  stock = answer
end

-- Each change appends one entry to the item's log (lua/include/log_entry.lua). "" stands for
-- "does not apply".
if logging then
  local log_key, log_first, log_batch, log_item, entry_ms = KEYS[#KEYS], false, false, key, false
  local log_who = false
  local actor, reason = ARGV[8], ARGV[9] or ''
  local id = request_id or ''
  if creating then
    local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
        'init', '', '', raw, id, ''
    -- @include log_entry
  end
  if answer ~= -1 and answer ~= -2 then
    local entry_change, entry_qty, entry_before, entry_after, entry_request, entry_hold =
        op, qty, raw, answer, id, ''
    -- @include log_entry
  end
end
-- Only a change that was made says so: a refusal answers as a refusal (a key created from the
-- caller's initial stock on the way is then the change whose entry is missing, which get shows).
if log_lost and answer ~= -2 then
  return redis.error_reply('STOCKCTL_LOG_LOST ' .. log_lost)
end
if answer == stock then return answer end
return {answer, stock, 0}
