mod common;
use common::*;

#[test]
fn smoke() {
    for cc in ["reno", "newreno", "cubic"] {
        let cfg = dumbbell(100, 50, 1.0, 20, vec![flow(cc, 50)]);
        let out = run(&cfg);
        let b = bytes_between(&out, 5.0, 20.0);
        let util = b[0] as f64 * 8.0 / (100e6 * 15.0);
        let f = &out.flows[0];
        println!("{cc}: util {util:.4} sent {} retrans {} rto {} fr {} drops {} events {} pkts {} eng {:.3}s rtt p50 {:?}",
          f.sent_pkts, f.retrans_pkts, f.timeouts, f.fast_recoveries, f.drops, out.events, out.bottleneck_data_packets, out.engine_seconds, f.rtt.quantile(0.5));
    }
}
