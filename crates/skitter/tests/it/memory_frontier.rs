//! The in-memory frontier against the frontier contract (`support/frontier_contract.rs`).
//! What only the memory frontier does (spilling past its budget) is tested in
//! `src/frontier/memory/tests.rs`.

use skitter::frontier::MemoryFrontier;

use crate::support::frontier_contract as contract;

#[tokio::test]
async fn dedups_and_exhausts() {
    contract::dedups_and_exhausts(&MemoryFrontier::new(contract::unlimited())).await;
}

#[tokio::test]
async fn full_host_does_not_block_others() {
    let f = MemoryFrontier::new(contract::one_per_host());
    contract::full_host_does_not_block_others(&f).await;
}

#[tokio::test]
async fn new_host_starts_with_the_initial_window() {
    let f = MemoryFrontier::new(contract::sixteen_per_host());
    contract::new_host_starts_with_the_initial_window(&f).await;
}

#[tokio::test]
async fn delayed_host_asks_to_wait() {
    let f = MemoryFrontier::new(contract::five_second_delay());
    contract::delayed_host_asks_to_wait(&f).await;
}

#[tokio::test]
async fn unknown_lease_is_an_error() {
    contract::unknown_lease_is_an_error(&MemoryFrontier::new(contract::unlimited())).await;
}

#[tokio::test]
async fn retry_waits_alone() {
    contract::retry_waits_alone(&MemoryFrontier::new(contract::unlimited())).await;
}

#[tokio::test]
async fn retry_comes_back_with_its_tries() {
    contract::retry_comes_back_with_its_tries(&MemoryFrontier::new(contract::unlimited())).await;
}

#[tokio::test]
async fn slow_down_pauses_only_its_host() {
    contract::slow_down_pauses_only_its_host(&MemoryFrontier::new(contract::unlimited())).await;
}
