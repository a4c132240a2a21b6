//! Running to time boundaries (`Simulator::run_until`) changes nothing: a
//! run made of steps of any size, with nothing set between them, is the
//! same run as one `run()`, trace and statistics, bit for bit. And a window
//! set between steps (`set_cwnd`) is what the sender goes on from.

mod common;
use common::*;
use sim::{Output, Simulator};

fn scenario() -> sim::Config {
    let mut late = flow("reno", 60);
    late.start_ns = 700_000_000;
    late.stop_ns = Some(4_100_000_000);
    let mut cfg = dumbbell(20, 40, 1.0, 5, vec![flow("cubic", 40), late]);
    cfg.bottleneck.loss = 0.002;
    cfg.interval_ns = 50_000_000;
    cfg
}

/// Everything but the engine's wall time, as text (NaN equal to NaN).
fn fingerprint(out: &Output) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {} {}",
        out.flow_columns,
        out.queue_columns,
        out.flows,
        out.queue,
        out.conservation.fields(),
        out.transfers,
        out.events,
        out.bottleneck_data_packets
    )
}

fn stepped(step_ns: u64, budget: u64) -> Output {
    let cfg = scenario();
    let mut sim = Simulator::new(&cfg).unwrap();
    let mut t = 0;
    while t < cfg.duration_ns {
        t = (t + step_ns).min(cfg.duration_ns);
        while !sim.run_until(t, budget) {}
        assert_eq!(sim.now_ns(), t);
    }
    sim.finish(0.0).unwrap()
}

#[test]
fn steps_change_nothing() {
    let one = fingerprint(&run(&scenario()));
    // The last also pauses every 1000 events inside a step.
    for (step_ns, budget) in [(1_000_000_000, u64::MAX), (370_000_000, u64::MAX), (10_000_000, 1_000)] {
        assert!(fingerprint(&stepped(step_ns, budget)) == one, "steps of {step_ns} ns, budget {budget}");
    }
}

#[test]
fn set_cwnd_is_where_the_sender_goes_on_from() {
    let cfg = scenario();
    let mut sim = Simulator::new(&cfg).unwrap();
    assert!(sim.set_cwnd(2, 5).is_err());
    assert!(sim.set_cwnd(0, 0).is_err());
    while !sim.run_until(1_000_000_000, u64::MAX) {}
    sim.set_cwnd(0, 3).unwrap();
    assert_eq!(sim.flow_cwnd_pacing(0).unwrap().0, 3);
    sim.set_pacing_rate(0, 8_000_000).unwrap();
    assert_eq!(sim.flow_cwnd_pacing(0).unwrap().1, 8_000_000);
    let out = sim.finish(0.0).unwrap();
    assert!(fingerprint(&out) != fingerprint(&run(&scenario())));
}

#[test]
fn set_cc_params_restarts_the_same_algorithm() {
    use cc::registry::ParamValue;
    let cfg = scenario();
    let mut sim = Simulator::new(&cfg).unwrap();
    while !sim.run_until(1_000_000_000, u64::MAX) {}
    let cwnd = sim.flow_cwnd_pacing(0).unwrap().0;
    assert!(sim.set_cc_params(0, &[("nonsense".into(), ParamValue::Int(1))]).is_err());
    sim.set_cc_params(0, &[("beta".into(), ParamValue::Float(0.5))]).unwrap();
    assert_eq!(sim.flow_cwnd_pacing(0).unwrap().0, cwnd, "the window stays");
    let out = sim.finish(0.0).unwrap();
    assert_eq!(out.flows[0].cc, "cubic");
    assert!(fingerprint(&out) != fingerprint(&run(&scenario())));
}
