-- Shared prelude of every frontier script (prepended in Rust).
-- ARGV[1] is the crawl's key prefix "skitter:{NAME}:"; KEYS[1..4] are the fixed
-- keys (count, ready, leases, lease), declared so a cluster routes the call to
-- the crawl's slot. Per-host and seen-bucket keys are built from the prefix and
-- share the same hash tag, hence the same slot.
local P = ARGV[1]
local COUNT, READY, LEASES, LEASE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- Scores are milliseconds with a microsecond fraction: 16 significant digits,
-- which the default number formatting (%.14g) would round away.
local function fmt(ms)
  return string.format('%.3f', ms)
end

-- Server time, so workers on machines with skewed clocks agree.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end

-- Keeps the invariant "a host is in READY iff it has work (queued URLs, or
-- retries waiting in r:<host>) and a free slot", scored by when it may start:
-- its next allowed start, or its first retry's due time when only retries wait.
-- A host already in READY keeps its place (round-robin fairness) unless its
-- start moved later, or it was waiting for a later time and may now go sooner.
local function schedule(host, now)
  local st = redis.call('HMGET', P .. 'h:' .. host, 'inflight', 'limit', 'next')
  local inflight = tonumber(st[1]) or 0
  local limit = tonumber(st[2]) or 1
  if inflight >= limit then
    redis.call('ZREM', READY, host)
    return
  end
  local at = math.max(tonumber(st[3]) or 0, now)
  if redis.call('LLEN', P .. 'q:' .. host) == 0 then
    local first = redis.call('ZRANGE', P .. 'r:' .. host, 0, 0, 'WITHSCORES')
    if #first == 0 then
      redis.call('ZREM', READY, host)
      return
    end
    at = math.max(at, tonumber(first[2]))
  end
  local current = tonumber(redis.call('ZSCORE', READY, host))
  if current == nil or at > current or (current > now and at < current) then
    redis.call('ZADD', READY, fmt(at), host)
  end
end

-- Takes a host slot for a request starting now (the twin of HostSlots::start):
-- the next start is one pacing gap away, and the recent pace is tracked.
local function start(host, limit, inflight, delay, jitter, now)
  local h = P .. 'h:' .. host
  local st = redis.call('HMGET', h, 'floor', 'gap', 'avg', 'last')
  local pace = math.max(delay, tonumber(st[1]) or 0, tonumber(st[2]) or 0)
  local avg = tonumber(st[3]) or 0
  local last = tonumber(st[4])
  if last then
    local cap = math.max(pace, 1000) * 2
    avg = (avg * 7 + math.min(math.max(now - last, 0), cap)) / 8
  end
  redis.call('HSET', h, 'inflight', inflight + 1, 'limit', limit,
    'next', fmt(now + pace + jitter), 'avg', fmt(avg), 'last', fmt(now))
end

-- Gives a host slot back (never below zero, whatever happened before).
local function release(host)
  local h = P .. 'h:' .. host
  local inflight = tonumber(redis.call('HGET', h, 'inflight')) or 0
  redis.call('HSET', h, 'inflight', math.max(inflight - 1, 0))
end

-- Splits "first<TAB>rest": a lease record is "host<TAB>entry" (hosts never
-- contain a tab), a retry entry "tries<TAB>entry". nil for a value that is not
-- one (garbled by something other than skitter): the caller drops it and says
-- so, instead of failing on it at every call.
local function split_tab(v)
  local tab = string.find(v, '\t', 1, true)
  if not tab or tab == 1 or tab == #v then
    return nil
  end
  return string.sub(v, 1, tab - 1), string.sub(v, tab + 1)
end

-- The count of a retry member "count<TAB>entry": "tries/lost", or "tries"
-- alone as older workers wrote it. nil when it is neither.
local function split_count(count)
  local tries, lost = string.match(count, '^(%d+)/(%d+)$')
  if tries then
    return tonumber(tries), tonumber(lost)
  end
  local n = tonumber(count)
  if not n then
    return nil
  end
  return n, 0
end

-- A lease record is "host<TAB>entry" under its id in LEASE, as older workers
-- write and read it; the URL's tries and lost leases before (see claim.lua),
-- "tries/lost", are kept beside it under 't' .. id, and only when not both
-- 0 (an older worker's lease has none). An older worker taking a lease away
-- leaves its 't' field behind, a few bytes; nothing reads it again.
local function lease_tries(id)
  local t = redis.call('HGET', LEASE, 't' .. id)
  if t then
    local tries, lost = split_count(t)
    if tries then
      return tries, lost
    end
  end
  return 0, 0
end

-- Writes the lease record of a claim (see lease_tries).
local function put_lease(id, host, entry, tries, lost)
  redis.call('HSET', LEASE, id, host .. '\t' .. entry)
  if tries ~= 0 or lost ~= 0 then
    redis.call('HSET', LEASE, 't' .. id, tries .. '/' .. lost)
  end
end

-- A member of a retry set r:<host>: "tries<TAB>entry", as older workers
-- write and read it, or "tries/lost<TAB>entry" once its lease was lost
-- (an older worker reads that as no tries, the entry intact).
local function retry_member(tries, lost, entry)
  if lost == 0 then
    return tries .. '\t' .. entry
  end
  return tries .. '/' .. lost .. '\t' .. entry
end

-- The crawl's counters (the hash COUNT). A script that adds to them checks
-- them all first, before any write, and refuses with the key and field named
-- when one is not an integer (set by something other than skitter): HINCRBY
-- would fail half-way through the script, leave its first writes behind and
-- fail again on every call, with an error that names nothing.
local COUNTERS = {'seen', 'queued', 'retrying', 'claimed', 'lease_seq'}
local function garbled_counter()
  local v = redis.call('HMGET', COUNT, unpack(COUNTERS))
  for i = 1, #COUNTERS do
    if v[i] and not string.match(v[i], '^%-?%d+$') then
      return 'malformed crawl data: field ' .. COUNTERS[i] .. ' of ' .. COUNT
        .. ' holds ' .. string.format('%q', string.sub(v[i], 1, 40))
        .. ', not an integer (repair or delete it)'
    end
  end
  return nil
end

-- What a script answers about malformed data it dropped: the key, the field
-- or member, and (the start of) the value, for the worker to report.
local function malformed(key, field, v)
  return key .. ' ' .. field .. ': ' .. string.sub(v, 1, 200)
end

-- The politeness rule, the twin of frontier/politeness.rs (its constants are
-- prepended from there): releases the host slot and applies what an answer
-- says about the server. signal: 0 silent, 1 clean, 2 failed, 3 slow down
-- (for wait ms; reason 1 = 429, 2 = Retry-After, 4 = robots.txt unavailable),
-- 5 failed again (release only). Returns {reason (0: none, 3: distress), cut
-- 0/1, limit, gap ms}. A host starts in slow start at the initial window
-- (the field 'limit', set by its first start in claim.lua); 'ca' is set by its first cut, after which clean answers
-- add one slot instead of doubling.
local function feedback(host, signal, wait, reason, max_in_flight, now)
  release(host)
  if signal == 0 or signal == 5 then
    return {0, 0, 0, 0}
  end
  local h = P .. 'h:' .. host
  local st = redis.call('HMGET', h, 'limit', 'next', 'gap', 'gcut', 'avg', 'wt', 'wf', 'sc', 'cat', 'ca')
  local limit = tonumber(st[1]) or 1
  local nxt = tonumber(st[2]) or 0
  local gap, gcut, avg = tonumber(st[3]) or 0, tonumber(st[4]) or 0, tonumber(st[5]) or 0
  local wt, wf = tonumber(st[6]) or 0, tonumber(st[7]) or 0
  local sc, cat = tonumber(st[8]) or 1e9, tonumber(st[9])
  local slow_start = st[10] == false
  local why, did = 0, 0
  local function window_len()
    return math.max(WINDOW, limit * 2)
  end
  local function cut()
    sc, did, cat, slow_start = 0, 1, now, false
    limit = math.max(1, math.floor(limit / 2))
    gap = math.min(math.max(gap * 2, avg * 2, MIN_GAP), MAX_GAP)
    gcut = gap
  end
  if signal == 3 then
    nxt = math.max(nxt, now + wait)
    sc = sc + 1
    if reason ~= 4 and sc >= window_len() then
      cut()
    end
    why = reason
  else
    if signal == 1 then
      if cat then
        local rounds = math.max(now - cat, 0) / RECOVERY_MS
        local cut_rate = 1000 / math.max(gcut, 0.001)
        local rate = cut_rate + math.max(cut_rate, MIN_RECOVERY_STEP) * rounds
        if rate >= cut_rate * RECOVERY_ROUNDS then
          gap, gcut, cat = 0, 0, nil
        else
          gap = 1000 / rate
        end
      end
      local grown = limit + 1
      if slow_start then
        grown = limit * 2
      end
      limit = math.max(limit, math.min(grown, max_in_flight))
    end
    wt, sc = wt + 1, sc + 1
    if signal == 2 then
      wf = wf + 1
    end
    if wt >= window_len() then
      local distressed = wf * 2 >= wt
      wt, wf = 0, 0
      if distressed then
        if sc >= window_len() then
          cut()
        end
        why = 3
      end
    end
  end
  redis.call('HSET', h, 'limit', limit, 'next', fmt(nxt), 'gap', fmt(gap), 'gcut', fmt(gcut),
    'wt', wt, 'wf', wf, 'sc', sc)
  if did == 1 then
    redis.call('HSET', h, 'ca', 1)
  end
  if cat then
    redis.call('HSET', h, 'cat', fmt(cat))
  else
    redis.call('HDEL', h, 'cat')
  end
  return {why, did, limit, math.floor(gap)}
end

-- Takes lease `id` away (lease set and record): its host, queue entry and
-- times lost before, or nil and the answer to give: 0 when the lease is gone
-- (expired and reclaimed, or acked already), 2 when its record was malformed
-- (dropped).
local function take_lease(id)
  local v = redis.call('HGET', LEASE, id)
  redis.call('ZREM', LEASES, id)
  if not v then
    return nil, 0
  end
  local _, lost = lease_tries(id)
  redis.call('HDEL', LEASE, id, 't' .. id)
  local host, entry = split_tab(v)
  if not host then
    return nil, 2
  end
  return host, entry, lost
end
