//! The politeness rule, step by step on explicit instants.

use super::*;
use crate::host::HostPolicy;

fn rules(max: usize, delay_ms: u64) -> HostPolicy {
    HostPolicy {
        max_in_flight: max,
        delay: Duration::from_millis(delay_ms),
        jitter: Duration::ZERO,
    }
}

fn policy(max: usize, delay_ms: u64) -> LivePolicy {
    LivePolicy::new(rules(max, delay_ms))
}

/// Runs one request start-to-finish at `now` with `signal`.
fn answer(h: &mut HostSlots, now: Instant, signal: HostFeedback) -> Option<Throttle> {
    h.start(now, Duration::ZERO);
    h.finish(now, signal)
}

/// A host past slow start at its full concurrency: clean answers until its
/// limit is the cap (each doubles it).
fn warmed(max: usize, delay_ms: u64, now: Instant) -> HostSlots {
    let mut h = HostSlots::new(policy(max, delay_ms));
    let mut answers = 0;
    while h.limit < max {
        answer(&mut h, now, HostFeedback::Clean);
        answers += 1;
    }
    let from = INITIAL_WINDOW.min(max);
    assert_eq!(
        answers,
        max.div_ceil(from).next_power_of_two().trailing_zeros()
    );
    h
}

#[test]
fn a_new_host_starts_with_the_initial_window_and_doubles_on_clean_answers() {
    let now = Instant::now();
    let mut h = HostSlots::new(policy(64, 0));
    for _ in 0..INITIAL_WINDOW {
        assert_eq!(h.ready_at(now), Ok(()));
        h.start(now, Duration::ZERO);
    }
    assert_eq!(
        h.ready_at(now),
        Err(None),
        "{INITIAL_WINDOW} in flight until one answers"
    );
    // Answers that say nothing about the server do not widen it.
    for signal in [HostFeedback::Silent, HostFeedback::FailedAgain] {
        h.finish(now, signal);
        h.start(now, Duration::ZERO);
        assert_eq!(h.ready_at(now), Err(None), "{signal:?}");
    }
    let mut limits = vec![h.limit];
    h.finish(now, HostFeedback::Clean);
    for _ in 0..4 {
        limits.push(h.limit);
        answer(&mut h, now, HostFeedback::Clean);
    }
    assert_eq!(
        limits,
        [6, 12, 24, 48, 64],
        "doubling, capped at max_in_flight"
    );
    // A cap below the initial window holds from the first request.
    let mut h = HostSlots::new(policy(2, 0));
    for _ in 0..2 {
        assert_eq!(h.ready_at(now), Ok(()));
        h.start(now, Duration::ZERO);
    }
    assert_eq!(h.ready_at(now), Err(None));
}

#[test]
fn a_cut_ends_slow_start_and_recovery_is_one_slot_per_answer() {
    let now = Instant::now();
    let pause = HostFeedback::SlowDown(Duration::ZERO, ThrottleReason::TooManyRequests);
    // Cut while still in slow start: from 12 to 6, then one at a time.
    let mut h = HostSlots::new(policy(64, 0));
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.limit, 12);
    assert!(answer(&mut h, now, pause).is_some_and(|t| t.cut && t.limit == 6));
    let mut limits = Vec::new();
    for _ in 0..3 {
        answer(&mut h, now, HostFeedback::Clean);
        limits.push(h.limit);
    }
    assert_eq!(limits, [7, 8, 9]);
    // Cut at full concurrency: halved, then one slot back per clean answer.
    let mut h = warmed(8, 0, now);
    assert!(answer(&mut h, now, pause).is_some_and(|t| t.cut && t.limit == 4));
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.limit, 5);
}

#[test]
fn slots_cap_concurrency() {
    let now = Instant::now();
    let mut h = warmed(2, 0, now);
    assert_eq!(h.ready_at(now), Ok(()));
    h.start(now, Duration::ZERO);
    h.start(now, Duration::ZERO);
    assert_eq!(h.ready_at(now), Err(None));
    h.finish(now, HostFeedback::Clean);
    assert_eq!(h.ready_at(now), Ok(()));
}

#[test]
fn delay_spaces_starts() {
    let now = Instant::now();
    let mut h = warmed(4, 100, now);
    h.start(now, Duration::ZERO);
    assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_millis(100))));
    assert_eq!(h.ready_at(now + Duration::from_millis(100)), Ok(()));
}

#[test]
fn crawl_delay_floor_applies() {
    let now = Instant::now();
    let mut h = warmed(4, 0, now);
    h.set_delay_floor(Duration::from_secs(2));
    h.start(now, Duration::ZERO);
    assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_secs(2))));
}

#[test]
fn one_url_in_ten_failing_never_slows_the_host() {
    let mut now = Instant::now();
    let mut h = HostSlots::new(policy(8, 0));
    for i in 0..1000 {
        now += Duration::from_millis(1);
        let signal = if i % 10 == 0 {
            HostFeedback::Failed
        } else {
            HostFeedback::Clean
        };
        assert_eq!(answer(&mut h, now, signal), None, "answer {i}");
    }
    assert_eq!(h.limit, 8);
    assert_eq!(h.ready_at(now), Ok(()));
}

#[test]
fn a_distressed_window_cuts_once() {
    let mut now = Instant::now();
    let mut h = warmed(8, 0, now);
    let mut throttles = Vec::new();
    for _ in 0..WINDOW {
        now += Duration::from_millis(4);
        throttles.extend(answer(&mut h, now, HostFeedback::Failed));
    }
    assert_eq!(throttles.len(), 1, "one cut for one window: {throttles:?}");
    let t = throttles[0];
    assert_eq!(t.reason, ThrottleReason::Distress);
    assert!(t.cut);
    assert_eq!(t.limit, 4);
    // Twice the recent pace (4 ms between starts): the request rate halves.
    assert!(t.gap >= Duration::from_millis(6), "{t:?}");
    // The next start waits for the gap.
    h.start(now, Duration::ZERO);
    assert!(matches!(h.ready_at(now), Err(Some(_))));
}

#[test]
fn sustained_distress_keeps_cutting_once_per_window() {
    let mut now = Instant::now();
    let mut h = HostSlots::new(policy(8, 0));
    let mut gaps = Vec::new();
    for _ in 0..5 {
        for _ in 0..WINDOW {
            now += Duration::from_millis(1);
            if let Some(t) = answer(&mut h, now, HostFeedback::Failed) {
                gaps.push(t.gap);
            }
        }
    }
    assert_eq!(gaps.len(), 5);
    assert!(
        gaps.windows(2)
            .all(|w| w[1] >= w[0] * 2 || w[1] == MAX_DISTRESS_GAP)
    );
    assert_eq!(h.limit, 1);
}

#[test]
fn only_attempts_cost_a_try_and_429s_are_counted_apart() {
    assert_eq!(HostSlots::try_cost(HostFeedback::Failed), 1);
    let pause = |r| HostFeedback::SlowDown(Duration::from_secs(1), r);
    assert_eq!(
        HostSlots::try_cost(pause(ThrottleReason::TooManyRequests)),
        crate::frontier::THROTTLED_TRY
    );
    assert_eq!(HostSlots::try_cost(pause(ThrottleReason::RetryAfter)), 1);
    assert_eq!(
        HostSlots::try_cost(pause(ThrottleReason::RobotsUnavailable)),
        0
    );
    assert_eq!(HostSlots::try_cost(HostFeedback::Silent), 0);
}

#[test]
fn too_many_requests_pauses_the_host_and_cuts_at_most_once_per_window() {
    let now = Instant::now();
    let mut h = warmed(8, 0, now);
    let pause = HostFeedback::SlowDown(Duration::from_secs(2), ThrottleReason::TooManyRequests);
    let first = answer(&mut h, now, pause).unwrap();
    assert!(first.cut);
    assert_eq!(first.limit, 4);
    assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_secs(2))));
    let second = answer(&mut h, now, pause).unwrap();
    assert!(!second.cut, "a burst of 429s is one signal");
    assert_eq!(h.limit, 4);
}

#[test]
fn robots_unavailable_pauses_without_a_cut() {
    let now = Instant::now();
    let mut h = warmed(8, 0, now);
    let t = h
        .finish(
            now,
            HostFeedback::SlowDown(Duration::from_secs(1), ThrottleReason::RobotsUnavailable),
        )
        .unwrap();
    assert!(!t.cut);
    assert_eq!(h.limit, 8);
    assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_secs(1))));
}

#[test]
fn recovery_is_additive_in_rate() {
    let mut now = Instant::now();
    let mut h = warmed(8, 0, now);
    for _ in 0..WINDOW {
        now += Duration::from_millis(2);
        answer(&mut h, now, HostFeedback::Failed);
    }
    let gap = h.distress_gap;
    let cut_rate = 1.0 / gap.as_secs_f64();
    assert!(cut_rate > MIN_RECOVERY_STEP, "{cut_rate}");
    assert_eq!(h.limit, 4);
    // One recovery time on, the rate has grown by the rate at the cut.
    now += RECOVERY_TIME;
    answer(&mut h, now, HostFeedback::Clean);
    let ratio = h.distress_gap.as_secs_f64() / gap.as_secs_f64();
    assert!((ratio - 0.5).abs() < 0.01, "{ratio}");
    // Two more: three times more.
    now += RECOVERY_TIME * 2;
    answer(&mut h, now, HostFeedback::Clean);
    let ratio = h.distress_gap.as_secs_f64() / gap.as_secs_f64();
    assert!((ratio - 0.25).abs() < 0.01, "{ratio}");
    now += RECOVERY_TIME * RECOVERY_ROUNDS;
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.distress_gap, Duration::ZERO);
    assert_eq!(h.limit, 7, "one slot back per clean answer");
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.limit, 8);
}

#[test]
fn a_trickle_recovers_within_seconds() {
    let mut now = Instant::now();
    let mut h = HostSlots::new(policy(8, 0));
    // An outage: few, slow answers (one a second), all failing.
    for _ in 0..WINDOW {
        now += Duration::from_secs(1);
        answer(&mut h, now, HostFeedback::Failed);
    }
    assert!(
        h.distress_gap >= Duration::from_secs(1),
        "{:?}",
        h.distress_gap
    );
    now += RECOVERY_TIME * 2;
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.distress_gap, Duration::ZERO, "{:?}", h.distress_gap);
}

#[test]
fn failing_again_is_not_distress() {
    let now = Instant::now();
    let mut h = warmed(8, 0, now);
    for _ in 0..WINDOW * 5 {
        assert_eq!(answer(&mut h, now, HostFeedback::FailedAgain), None);
    }
    assert_eq!(h.limit, 8);
    assert_eq!(HostSlots::try_cost(HostFeedback::FailedAgain), 1);
}

#[test]
fn a_busy_host_has_longer_windows() {
    let mut now = Instant::now();
    let mut h = warmed(500, 0, now);
    // 500 in flight: a window is 1,000 answers, so a burst of 60 failures among
    // the first 100 (as a wave of answers may bring) is not distress.
    for i in 0..1000 {
        now += Duration::from_micros(100);
        let signal = if i < 60 || i % 10 == 0 {
            HostFeedback::Failed
        } else {
            HostFeedback::Clean
        };
        assert_eq!(answer(&mut h, now, signal), None, "answer {i}");
    }
    assert_eq!(h.limit, 500);
}

#[test]
fn idle_only_once_nothing_is_owed() {
    let mut now = Instant::now();
    let mut h = HostSlots::new(policy(4, 2000));
    assert!(h.is_idle(now), "a new host owes nothing");
    h.start(now, Duration::ZERO);
    assert!(!h.is_idle(now), "a request in flight");
    h.finish(now, HostFeedback::Clean);
    assert!(!h.is_idle(now), "the --delay gap is still to wait");
    now += Duration::from_secs(2);
    assert!(h.is_idle(now));

    // A slow-down pauses the host and cuts it; the cut is owed until settled.
    h.start(now, Duration::ZERO);
    let wait = Duration::from_secs(5);
    let throttle = h.finish(
        now,
        HostFeedback::SlowDown(wait, ThrottleReason::TooManyRequests),
    );
    assert!(throttle.is_some_and(|t| t.cut));
    now += wait;
    assert!(!h.is_idle(now), "the cut is still in effect");
    now += SETTLE_TIME - wait;
    assert!(h.is_idle(now), "settled {SETTLE_TIME:?} after the cut");
}

#[test]
fn a_host_in_slow_start_is_idle_but_one_recovering_from_a_cut_is_kept() {
    let mut now = Instant::now();
    // Forgotten and rebuilt, it starts at the initial window again: nothing
    // lost.
    let mut h = HostSlots::new(policy(64, 0));
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.limit, 2 * INITIAL_WINDOW);
    assert!(h.is_idle(now), "in slow start, nothing owed");
    // Cut, then its rate recovered (the gap is gone) but not its concurrency:
    // rebuilt, slow start would regain it faster than one slot per answer.
    let pause = HostFeedback::SlowDown(Duration::ZERO, ThrottleReason::TooManyRequests);
    answer(&mut h, now, pause);
    now += RECOVERY_TIME * RECOVERY_ROUNDS;
    answer(&mut h, now, HostFeedback::Clean);
    assert_eq!(h.distress_gap, Duration::ZERO);
    assert!(h.limit < 64);
    assert!(!h.is_idle(now), "its additive recovery is still owed");
    now += SETTLE_TIME;
    assert!(h.is_idle(now), "quiet {SETTLE_TIME:?}");
}

#[test]
fn a_live_change_reaches_a_host_that_exists_from_its_next_start() {
    let t0 = Instant::now();
    let live = policy(4, 1000);
    let mut h = warmed(4, 1000, t0);
    h.policy = live.clone();
    h.start(t0, Duration::ZERO);
    // The gap already owed is kept; the next one is the new delay.
    live.set(rules(1, 100));
    assert_eq!(h.ready_at(t0), Err(None), "per-host lowered to 1: full");
    h.finish(t0, HostFeedback::Clean);
    assert_eq!(h.limit, 1, "a clean answer does not widen past the new cap");
    let owed = t0 + Duration::from_millis(1000);
    assert_eq!(h.ready_at(t0), Err(Some(owed)));
    h.start(owed, Duration::ZERO);
    h.finish(owed, HostFeedback::Clean);
    let next = owed + Duration::from_millis(100);
    assert_eq!(h.ready_at(owed), Err(Some(next)));
    // Raised again: clean answers widen it up to the new cap.
    live.set(rules(3, 0));
    for _ in 0..3 {
        h.start(next, Duration::ZERO);
        h.finish(next, HostFeedback::Clean);
    }
    assert_eq!(h.limit, 3);
}
