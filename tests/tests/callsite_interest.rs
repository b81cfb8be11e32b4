//! `share_callsite_interest`, which every log-capturing test helper calls, does what the
//! tests rely on: a span first reached on a thread without a subscriber is still made for a
//! test whose own subscriber wants it. (Its own process: no other test may reach the span.)

fn shared_span() -> tracing::Span {
    tracing::info_span!("shared")
}

#[test]
fn a_span_first_reached_on_a_thread_without_a_subscriber_is_made_for_this_test() {
    toolgate_tests::share_callsite_interest();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .finish();
    let _this_test = tracing::subscriber::set_default(subscriber);
    // A sibling test's thread, with no subscriber, reaches the span first.
    std::thread::spawn(|| drop(shared_span())).join().unwrap();
    assert!(!shared_span().is_disabled());
}
