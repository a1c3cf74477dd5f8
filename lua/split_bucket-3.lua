-- split_bucket: the steps on one bucket of a split item (docs/split.md): drain it for a merge or
-- a new split, move units between two buckets of the same layout, and leave a sold-out hint.
--
-- Draining: the bucket's units leave it and are recorded in its place in the same moment
-- ("stockctl:drained:1 <gen> <units>"), so a deduction on the bucket either came before (and
-- counted) or finds the drained record, which is not a number (and fails closed: the stock
-- script answers STOCKCTL_CORRUPT, and the caller reads the layout again). A bucket with a
-- transfer still recorded as sent is not drained: the caller finishes the transfer first.
--
-- Moving k units from bucket j to bucket i (transfer id X), docs/split.md "Moving units between
-- buckets":
--   send, on j: takes them out and records "out:X" = "<k> <i's key>" in j's moves hash in the
--     same moment, and leaves a mark that X was sent ("<j's key>:sent:X", for a day), so that
--     a resend of X after the transfer was finished takes nothing again;
--   confirm, on j (a process finishing a transfer another one sent): writes the record again,
--     so that the caller's WAIT covers it: a receive of units whose departure a failover of j
--     could still undo would create them;
--   receive, on i: adds k once. The receipt ("<i's key>:in:X") is created with the units and
--     has no expiry; a receive is refused once its deadline (j's clock at send or confirm,
--     plus five minutes) has passed, unless the receipt is there;
--   then the caller deletes "out:X" on j (HDEL) and, once that is confirmed, gives the receipt
--     an expiry (EXPIRE, half an hour): a receive still on its way was confirmed before the
--     HDEL, so its deadline passes before the receipt goes.
-- Units in a transfer recorded at j and not yet received at i are in neither bucket: initial +
-- added = buckets + held + sold + those.
--
-- Each send also counts itself in j's moves hash ("sent"), in the same moment: a reader that
-- finds no transfer recorded at j and the same count before and after reading the buckets knows
-- that no unit left j in between, so none was on its way unseen (docs/split.md, step 6).
--
-- The sold-out hint (docs/split.md, "A sold-out item stays cheap"): a reader that proved the
-- item short leaves "<total> <nonce>" in "<bucket>:short" for a moment, but only if that key
-- still holds what the reader's peek found there before it read the buckets, less than a
-- hint's life ago, and no add is running on the bucket. An add registers itself in every bucket's "<bucket>:adds" (and writes "add
-- <nonce>" into the hint's key) before its units come, and unregisters (writing "added
-- <nonce>") after: a proof that an add overtook leaves nothing, and none is left while an add
-- runs. Every writer of the key writes a word of its own, so that a compare that matches means
-- nothing was written since, or what was has expired: which takes a hint's life at least, and
-- is why the peek must be younger than that.
--
-- KEYS[1]  the bucket key (stockctl:bucket:{<tag>}:<stock key>:<gen>:<index>)
-- KEYS[2]  its moves hash (<bucket key>:moves: "out:<X>" -> "<k> <destination>", and "sent":
--          how many transfers left the bucket)
-- KEYS[3]  send: the mark of X at this bucket (<bucket key>:sent:<X>); receive: the receipt
--          of X at this bucket (<bucket key>:in:<X>); peek, hint, adding, added: <bucket
--          key>:short; drain, confirm: none
-- KEYS[4]  peek, hint, adding, added: <bucket key>:adds (sorted set: nonce -> running until,
--          ms)
-- ARGV[1]  op: "drain", "send", "confirm", "receive", "peek", "hint", "adding" or "added"
-- drain:   ARGV[2] the generation of the bucket's layout, kept in the drained record
-- send:    ARGV[2] the transfer id X; ARGV[3] k; ARGV[4] the destination bucket's key
-- confirm: ARGV[2] the transfer id X
-- receive: ARGV[2] the transfer id X; ARGV[3] k; ARGV[4] the deadline, in Unix seconds
-- peek:    nothing more
-- hint:    ARGV[2] what the peek found ("" for nothing); ARGV[3] the total; ARGV[4] the
--          hint's life in milliseconds; ARGV[5] a new nonce; ARGV[6] the peek's time (ms)
-- adding:  ARGV[2] the add's nonce (hex); ARGV[3] how long it counts as running, in ms
-- added:   ARGV[2] the add's nonce; ARGV[3] how long its mark stays, in ms
--
-- Replies: {status, value, ...}:
--   drain:   {"ok", <units>} drained now, or by an earlier try (the record's units, the
--            record written again);
--            {"moving", <"out:X" field>, <its value>, ...} transfers sent and not yet
--            finished, nothing changed
--   send:    {"ok", <stock left>, <now>} sent now, or by an earlier try whose record is still
--            there (written again); <now> is this server's clock in Unix seconds;
--            {"finished", <stock>} sent by an earlier try and finished since: nothing taken;
--            {"short", <stock>} the bucket holds less than k, nothing changed
--   confirm: {"ok", <stock>, <now>} X is recorded here (written again); {"gone", <stock>} it
--            is not: finished, or never sent
--   receive: {"ok", <stock after>} received now, or by an earlier try (its receipt written
--            again, for the caller's WAIT); a drained bucket adds
--            k to its record's units; {"late", <stock>} past the deadline and not received
--            before: nothing changed
--   peek:    {"ok", <what the hint's key holds, "" for nothing>, <now, ms>}
--   hint:    {"ok", <stock>} written; {"stale", <what the key holds>} the key changed since
--            the peek, the peek is a hint's life old, or an add is running: nothing written
--   adding, added: {"ok", <stock>}; adding on a drained bucket: {"changed", <value>}
--   any op:  {"missing", false} no such bucket; {"changed", <value>} the bucket was drained
--            (send, peek, hint, adding); {"corrupt", <value>} neither a stock value nor a drained record,
--            left as it is
-- Error replies: STOCKCTL_INVALID <what>: "op <op>", "generation <gen>", "qty <k>", "id",
-- "deadline <d>", "total <t>", "life <ms>", "nonce <n>", "peeked <ms>".
local MAX = 9007199254740991
local find, match = string.find, string.match

local bucket, moves, op = KEYS[1], KEYS[2], ARGV[1]
local OPS = {drain = true, send = true, confirm = true, receive = true, hint = true,
  adding = true, added = true, peek = true}
if not OPS[op] then
  return redis.error_reply('STOCKCTL_INVALID op ' .. tostring(op))
end

local raw = redis.call('GET', bucket)
if not raw then return {'missing', false} end
local drained_gen, drained_units = match(raw, '^stockctl:drained:1 (%x+) (%d+)$')
local stock = not drained_units and (raw == '0' or (#raw <= 16 and find(raw, '^[1-9]%d*$')
    and tonumber(raw) <= MAX)) and raw
if not drained_units and not stock then return {'corrupt', raw} end

if op == 'drain' then
  local gen = ARGV[2]
  if not (gen and find(gen, '^%x+$')) then
    return redis.error_reply('STOCKCTL_INVALID generation ' .. tostring(gen))
  end
  if drained_units then
    -- Drained before, maybe by a try whose reply was lost: written again, so that this
    -- caller's WAIT covers the drain before the units are counted in the record.
    redis.call('SET', bucket, raw)
    return {'ok', drained_units}
  end
  local pending = {'moving'}
  local all = redis.call('HGETALL', moves)
  for j = 1, #all, 2 do
    if find(all[j], '^out:') then
      pending[#pending + 1] = all[j]
      pending[#pending + 1] = all[j + 1]
    end
  end
  if #pending > 1 then return pending end
  redis.call('SET', bucket, 'stockctl:drained:1 ' .. gen .. ' ' .. raw)
  return {'ok', raw}
end

if op == 'hint' or op == 'adding' or op == 'added' or op == 'peek' then
  -- The sold-out hint's key (KEYS[3]) and the adds running on the bucket (KEYS[4], a sorted
  -- set: nonce -> the server time in ms until which that add counts as running).
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if op == 'peek' then
    -- A proof's first read: what the hint's key holds, and when (this server's clock).
    if drained_units then return {'changed', raw} end
    return {'ok', redis.call('GET', KEYS[3]) or '', now}
  end
  local word = ARGV[op == 'hint' and 5 or 2]
  if not (word and find(word, '^%x+$') and #word <= 32) then
    return redis.error_reply('STOCKCTL_INVALID nonce ' .. tostring(word))
  end
  local life = ARGV[op == 'hint' and 4 or 3]
  if not (life and find(life, '^[1-9]%d*$') and #life <= 9) then
    return redis.error_reply('STOCKCTL_INVALID life ' .. tostring(life))
  end
  if op == 'adding' then
    if drained_units then return {'changed', raw} end
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
    redis.call('ZADD', KEYS[4], now + tonumber(life), word)
    if redis.call('PTTL', KEYS[4]) < tonumber(life) then redis.call('PEXPIRE', KEYS[4], life) end
    redis.call('SET', KEYS[3], 'add ' .. word, 'PX', life)
    return {'ok', raw}
  end
  if op == 'added' then
    redis.call('ZREM', KEYS[4], word)
    redis.call('SET', KEYS[3], 'added ' .. word, 'PX', life)
    return {'ok', raw}
  end
  -- hint: compare and set. It goes in only if the key still holds what the proof's peek
  -- found before it read the buckets (every add and every hint writes a word of its own
  -- there), less than a hint's life ago (the one value that can come back is nothing, once
  -- what was written after the peek expired: a hint lives that long at least), and no add is
  -- running on this bucket.
  local total, peeked = ARGV[3], ARGV[6]
  if not (total and find(total, '^%d+$') and #total <= 16) then
    return redis.error_reply('STOCKCTL_INVALID total ' .. tostring(total))
  end
  if not (peeked and find(peeked, '^%d+$') and #peeked <= 16) then
    return redis.error_reply('STOCKCTL_INVALID peeked ' .. tostring(peeked))
  end
  if drained_units then return {'changed', raw} end
  local now_there = redis.call('GET', KEYS[3]) or ''
  if now_there ~= (ARGV[2] or '') or now - tonumber(peeked) >= tonumber(life)
      or redis.call('ZCOUNT', KEYS[4], now, '+inf') > 0 then
    return {'stale', now_there}
  end
  redis.call('SET', KEYS[3], total .. ' ' .. word, 'PX', life)
  return {'ok', raw}
end

local id = ARGV[2]
if not (id and id ~= '') then return redis.error_reply('STOCKCTL_INVALID id') end
local field = 'out:' .. id

local function now()
  return tonumber(redis.call('TIME')[1])
end

if op == 'confirm' then
  local recorded = redis.call('HGET', moves, field)
  if not recorded then return {'gone', raw} end
  redis.call('HSET', moves, field, recorded)
  return {'ok', raw, now()}
end

local qty = ARGV[3]
if not (qty and find(qty, '^[1-9]%d*$') and #qty <= 16 and tonumber(qty) <= MAX) then
  return redis.error_reply('STOCKCTL_INVALID qty ' .. tostring(qty))
end

if op == 'send' then
  local recorded = redis.call('HGET', moves, field)
  if recorded then
    redis.call('HSET', moves, field, recorded)
    return {'ok', raw, now()}
  end
  if redis.call('EXISTS', KEYS[3]) == 1 then return {'finished', raw} end
  if drained_units then return {'changed', raw} end
  if tonumber(stock) < tonumber(qty) then return {'short', stock} end
  local left = redis.call('DECRBY', bucket, qty)
  redis.call('HSET', moves, field, qty .. ' ' .. ARGV[4])
  redis.call('HINCRBY', moves, 'sent', 1)
  redis.call('SET', KEYS[3], '1', 'EX', 86400)
  return {'ok', left, now()}
end

-- receive
local receipt = redis.call('GET', KEYS[3])
if receipt then
  -- Received before, maybe on a connection that broke or by another process: written again,
  -- so that this caller's WAIT covers the first receive before it deletes the record.
  redis.call('SET', KEYS[3], receipt, 'KEEPTTL')
  return {'ok', raw}
end
local deadline = ARGV[4]
if not (deadline and find(deadline, '^%d+$') and #deadline <= 12) then
  return redis.error_reply('STOCKCTL_INVALID deadline ' .. tostring(deadline))
end
if now() > tonumber(deadline) then return {'late', raw} end
redis.call('SET', KEYS[3], qty)
if drained_units then
  local units = string.format('%d', tonumber(drained_units) + tonumber(qty))
  redis.call('SET', bucket, 'stockctl:drained:1 ' .. drained_gen .. ' ' .. units)
  return {'ok', units}
end
return {'ok', redis.call('INCRBY', bucket, qty)}
