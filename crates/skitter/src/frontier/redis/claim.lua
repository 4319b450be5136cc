-- Reclaims expired leases, then claims one URL of a ready host.
-- ARGV: prefix, max_in_flight (a host's limit is in its hash, set at its
-- first start to the initial window capped by this), delay_ms, jitter_ms, lease_ms, poll_ms,
-- reclaim_batch, max_claims (0: no crawl-wide limit).
-- Returns {1, lease id, entry, tries, lost} | {0, wait ms, '', 0, 0} |
-- {2, 0, '', 0, 0} (exhausted) | {3, 0, '', 0, 0} (the crawl-wide claim limit
-- is used up and no lease is outstanding) | {4, 0, what, 0, 0} (malformed data
-- was dropped, see `malformed`; the worker reports it and claims again). A due
-- retry of a host goes before its queued URLs.
do
  local garbled = garbled_counter()
  if garbled then
    return redis.error_reply(garbled)
  end
end
local delay, jitter = tonumber(ARGV[3]), tonumber(ARGV[4])
local lease_ms, poll = tonumber(ARGV[5]), tonumber(ARGV[6])
local now = now_ms()

-- A dead worker's leases go back as retries due now (so before their host's
-- queued URLs), with one failed try and one loss more: a URL that brings its
-- workers down cannot loop for ever, the worker quarantines it after a few
-- losses (RetryPolicy::quarantine_after), and --max-tries still holds.
local expired = redis.call('ZRANGEBYSCORE', LEASES, '-inf', fmt(now), 'LIMIT', 0, tonumber(ARGV[7]))
for _, id in ipairs(expired) do
  local v = redis.call('HGET', LEASE, id)
  local tries, lost = lease_tries(id)
  redis.call('ZREM', LEASES, id)
  redis.call('HDEL', LEASE, id, 't' .. id)
  if v then
    local host, entry = split_tab(v)
    if not host then
      return {4, 0, malformed(LEASE, id, v), 0, 0}
    end
    redis.call('ZADD', P .. 'r:' .. host, fmt(now), retry_member(tries + 1, lost + 1, entry))
    redis.call('HINCRBY', COUNT, 'retrying', 1)
    release(host)
    schedule(host, now)
  end
end

-- The crawl-wide page limit: once all workers together have claimed
-- max_claims URLs nothing more is handed out; the crawl ends for everyone when
-- the last outstanding lease is acked (or expires and is requeued).
local max_claims = tonumber(ARGV[8])
if max_claims > 0 and (tonumber(redis.call('HGET', COUNT, 'claimed')) or 0) >= max_claims then
  if redis.call('ZCARD', LEASES) == 0 then
    return {3, 0, '', 0, 0}
  end
  return {0, poll, '', 0, 0}
end

-- READY only holds hosts with work and a free slot; the checks below guard
-- against a state written by an older or interrupted script, never loop forever.
for _ = 1, 16 do
  local first = redis.call('ZRANGEBYSCORE', READY, '-inf', fmt(now), 'LIMIT', 0, 1)
  if #first == 0 then
    break
  end
  local host = first[1]
  local h = P .. 'h:' .. host
  local st = redis.call('HMGET', h, 'inflight', 'limit')
  local inflight = tonumber(st[1]) or 0
  -- A host not started yet is in slow start at the initial window.
  local limit = tonumber(st[2]) or math.max(1, math.min(INITIAL_WINDOW, tonumber(ARGV[2])))
  local entry, tries, lost = nil, 0, 0
  if inflight < limit then
    local rkey = P .. 'r:' .. host
    local due = redis.call('ZRANGEBYSCORE', rkey, '-inf', fmt(now), 'LIMIT', 0, 1)
    if #due > 0 then
      redis.call('ZREM', rkey, due[1])
      redis.call('HINCRBY', COUNT, 'retrying', -1)
      local count
      count, entry = split_tab(due[1])
      tries = nil
      if count then
        tries, lost = split_count(count)
      end
      if not tries then
        schedule(host, now)
        return {4, 0, malformed(rkey, 'member', due[1]), 0, 0}
      end
    else
      entry = redis.call('LPOP', P .. 'q:' .. host)
      if entry then
        redis.call('HINCRBY', COUNT, 'queued', -1)
      end
    end
  end
  if not entry then
    schedule(host, now)
    local score = redis.call('ZSCORE', READY, host)
    if score and tonumber(score) <= now then
      -- Ready by its score, yet nothing to take: a stale entry; drop it.
      redis.call('ZREM', READY, host)
    end
  else
    start(host, limit, inflight, delay, jitter, now)
    schedule(host, now)
    local id = redis.call('HINCRBY', COUNT, 'lease_seq', 1)
    redis.call('ZADD', LEASES, fmt(now + lease_ms), id)
    put_lease(id, host, entry, tries, lost)
    redis.call('HINCRBY', COUNT, 'claimed', 1)
    return {1, id, entry, tries, lost}
  end
end

local soonest = redis.call('ZRANGE', READY, 0, 0, 'WITHSCORES')
if #soonest > 0 then
  return {0, math.max(1, math.min(poll, math.ceil(tonumber(soonest[2]) - now))), '', 0, 0}
end
local counts = redis.call('HMGET', COUNT, 'queued', 'retrying')
local queued, retrying = tonumber(counts[1]) or 0, tonumber(counts[2]) or 0
if queued <= 0 and retrying <= 0 and redis.call('ZCARD', LEASES) == 0 then
  return {2, 0, '', 0, 0}
end
return {0, poll, '', 0, 0}
