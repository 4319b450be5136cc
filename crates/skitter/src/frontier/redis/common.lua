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

-- Keeps the invariant "a host is in READY iff it has queued URLs and a free
-- slot", scored by its next allowed start. A host already in READY keeps its
-- place (round-robin fairness) unless its next start moved later.
local function schedule(host, max_in_flight, now)
  local st = redis.call('HMGET', P .. 'h:' .. host, 'inflight', 'limit', 'next')
  local inflight = tonumber(st[1]) or 0
  local limit = tonumber(st[2]) or max_in_flight
  if inflight >= limit or redis.call('LLEN', P .. 'q:' .. host) == 0 then
    redis.call('ZREM', READY, host)
    return
  end
  local next_start = tonumber(st[3]) or 0
  local current = tonumber(redis.call('ZSCORE', READY, host))
  if current == nil then
    redis.call('ZADD', READY, fmt(math.max(next_start, now)), host)
  elseif next_start > current then
    redis.call('ZADD', READY, fmt(next_start), host)
  end
end

-- Gives a host slot back (never below zero, whatever happened before).
local function release(host)
  local h = P .. 'h:' .. host
  local inflight = tonumber(redis.call('HGET', h, 'inflight')) or 0
  redis.call('HSET', h, 'inflight', math.max(inflight - 1, 0))
end

-- A lease record is "host<TAB>entry"; hosts never contain a tab.
local function split_lease(v)
  local tab = string.find(v, '\t', 1, true)
  return string.sub(v, 1, tab - 1), string.sub(v, tab + 1)
end
