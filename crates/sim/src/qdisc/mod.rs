//! Queue disciplines of a link's port: DropTail, RED (gentle, adaptive),
//! CoDel, PIE, FQ-CoDel, DualPI2 and the XCP router, with ECN marking.
//!
//! A discipline is one file: its configuration (a struct implementing
//! [`QdiscKind`]: its catalogue entry with every parameter's type, range,
//! default and source, its [`Fields`] and how it is built) and its queue
//! (a struct implementing [`Discipline`]: `enqueue` and `dequeue`, and
//! optionally state columns for the queue trace). It is registered by
//! one line in the table of `disciplines!` below, which makes the
//! [`QdiscConfig`] variant, the [`catalogue`] entry, the parser's case and
//! the static dispatch ([`AnyDiscipline`], a `match` per call, no
//! allocation and no virtual call per packet). Adding `foo`: the file
//! `foo.rs` with `FooConfig` (and its `Default`) implementing [`QdiscKind`]
//! and `Foo` implementing [`Discipline`], then `pub mod foo;` and the row
//! `Foo(foo::FooConfig),` here (a `pub use` of the two is optional).
//!
//! [`Qdisc`] keeps the books around the discipline, once for all of them
//! (ns-3's `QueueDisc` base, `traffic-control/model/queue-disc.h`):
//! arrivals, drops by [`DropReason`], CE marks, the packets and bytes held
//! and the departures' sojourn ([`Books`]). A discipline reads the held
//! totals and reports marks and drops through the [`Cx`] it is handed.
//!
//! A discipline sees packets only through [`PacketView`], so the simulator's
//! arena and the emulator's slots share the code. Packets a discipline drops
//! after admitting them (CoDel's head drops, FQ-CoDel's overflow batch) are
//! handed back through [`Qdisc::pop_dropped`]; an arriving packet refused at
//! enqueue is signalled by `false`.

pub mod books;
pub mod codel;
pub mod discipline;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub mod params;
pub mod pie;
pub mod queue;
pub mod red;
pub mod xcp;

pub use books::{Books, Cx, DropReason};
pub use codel::{Codel, CodelConfig};
pub use discipline::{Discipline, Env, QdiscKind, MAX_STATE};
pub use droptail::{DropTail, DropTailConfig};
pub use dualpi2::{DualPi2, DualPi2Config};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use params::{Args, DefaultValue, Fields, ParamType, ParamValue, QdiscInfo, QdiscParam, Unit};
pub use pie::{Pie, PieConfig};
pub use queue::{Fifo, QueueLimit, MAX_BUFFER_BYTES, MAX_BUFFER_PKTS};
pub use red::{Red, RedConfig, RedMode};
pub use xcp::{XcpConfig, XcpPort, XcpRouter};

use crate::event::Time;
use crate::packet::PacketId;
pub use crate::packet::PacketView;
use crate::rng::Rng;

/// The registration table: the first row is the default and has no
/// parameters (a unit variant of [`QdiscConfig`]); every other row is
/// `Variant(ConfigType)`. The discipline sits in a `Box` so that the enum
/// stays small.
macro_rules! disciplines {
    (
        $(#[$udoc:meta])* $unit:ident($ucfg:ty),
        $( $(#[$doc:meta])* $name:ident($cfg:ty), )*
    ) => {
        /// The discipline of a link. The capacity (`QueueLimit`) stays in the link.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub enum QdiscConfig {
            $(#[$udoc])*
            #[default]
            $unit,
            $( $(#[$doc])* $name($cfg), )*
        }

        /// One of the disciplines, dispatched statically.
        #[derive(Debug)]
        pub enum AnyDiscipline {
            $unit(<$ucfg as QdiscKind>::Qdisc),
            $( $name(Box<<$cfg as QdiscKind>::Qdisc>), )*
        }

        /// Every discipline with its parameters, defaults, ranges and sources.
        pub fn catalogue() -> Vec<QdiscInfo> {
            vec![<$ucfg>::info(), $( <$cfg>::info(), )*]
        }

        impl QdiscConfig {
            /// The configuration of `kind` read from `f` (a [`Fields::Read`]).
            fn read(kind: &str, f: &mut Fields) -> Result<QdiscConfig, String> {
                if kind == <$ucfg>::KIND {
                    <$ucfg>::default().fields(f)?;
                    return Ok(QdiscConfig::$unit);
                }
                $( if kind == <$cfg>::KIND {
                    let mut c = <$cfg>::default();
                    c.fields(f)?;
                    return Ok(QdiscConfig::$name(c));
                } )*
                unreachable!("catalogue and parser disagree on {kind}")
            }

            /// Writes the fields to `f` (a [`Fields::Write`]).
            fn write(&self, f: &mut Fields) -> Result<(), String> {
                match self {
                    QdiscConfig::$unit => <$ucfg>::default().fields(f),
                    $( QdiscConfig::$name(c) => c.clone().fields(f), )*
                }
            }

            pub fn name(&self) -> &'static str {
                match self {
                    QdiscConfig::$unit => <$ucfg>::KIND,
                    $( QdiscConfig::$name(_) => <$cfg>::KIND, )*
                }
            }

            fn build(&self, env: Env) -> AnyDiscipline {
                match self {
                    QdiscConfig::$unit => AnyDiscipline::$unit(<$ucfg>::default().build(env)),
                    $( QdiscConfig::$name(c) => AnyDiscipline::$name(Box::new(c.build(env))), )*
                }
            }
        }

        impl AnyDiscipline {
            pub fn name(&self) -> &'static str {
                match self {
                    AnyDiscipline::$unit(_) => <$ucfg>::KIND,
                    $( AnyDiscipline::$name(_) => <$cfg>::KIND, )*
                }
            }
        }

        impl Discipline for AnyDiscipline {
            #[inline]
            fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
                match self {
                    AnyDiscipline::$unit(q) => q.enqueue(id, cx),
                    $( AnyDiscipline::$name(q) => q.enqueue(id, cx), )*
                }
            }

            #[inline]
            fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId> {
                match self {
                    AnyDiscipline::$unit(q) => q.dequeue(cx),
                    $( AnyDiscipline::$name(q) => q.dequeue(cx), )*
                }
            }

            fn state_names(&self) -> &'static [&'static str] {
                match self {
                    AnyDiscipline::$unit(q) => q.state_names(),
                    $( AnyDiscipline::$name(q) => q.state_names(), )*
                }
            }

            fn state(&self) -> [f64; 2] {
                match self {
                    AnyDiscipline::$unit(q) => q.state(),
                    $( AnyDiscipline::$name(q) => q.state(), )*
                }
            }

            fn state_all(&self) -> [f64; MAX_STATE] {
                match self {
                    AnyDiscipline::$unit(q) => q.state_all(),
                    $( AnyDiscipline::$name(q) => q.state_all(), )*
                }
            }
        }
    };
}

disciplines! {
    /// Tail drop, the default.
    DropTail(DropTailConfig),
    Red(RedConfig),
    Codel(CodelConfig),
    Pie(PieConfig),
    FqCodel(FqCodelConfig),
    DualPi2(DualPi2Config),
    /// XCP's port: XCP and other traffic in weighted queues, XCP packets
    /// stamped with feedback as they leave.
    Xcp(XcpConfig),
}

impl QdiscConfig {
    /// Builds a configuration from the discipline's name and parameters,
    /// checking names, types and ranges against [`catalogue`].
    pub fn from_params(kind: &str, given: &[(String, ParamValue)]) -> Result<QdiscConfig, String> {
        let cat = catalogue();
        let info = cat.iter().find(|i| i.name == kind).ok_or_else(|| {
            format!("unknown qdisc {kind:?} (known: {})", cat.iter().map(|i| i.name).collect::<Vec<_>>().join(", "))
        })?;
        for (k, _) in given {
            if !info.params.iter().any(|q| q.name == k) {
                return Err(format!("{k}: unknown parameter of {kind}"));
            }
        }
        QdiscConfig::read(kind, &mut Fields::Read(Args { info, given }))
    }

    /// The configuration as [`QdiscConfig::from_params`] takes it (its
    /// inverse), so a configuration built by hand can be checked against the
    /// catalogue's ranges. Times and sizes too large for an integer parameter
    /// come out as `i64::MAX`, which no range admits.
    pub fn params(&self) -> Vec<(String, ParamValue)> {
        let mut f = Fields::Write(Vec::new());
        self.write(&mut f).expect("writing fields cannot fail");
        match f {
            Fields::Write(list) => list,
            Fields::Read(_) => unreachable!(),
        }
    }
}

// ---------------------------------------------------------------- the books

/// A discipline and its books: the counters are kept here, around the
/// discipline's `enqueue` and `dequeue`. `Qdisc` alone is the port's
/// discipline, one of [`AnyDiscipline`]; `Qdisc<D>` holds one type.
#[derive(Debug)]
pub struct Qdisc<D = AnyDiscipline> {
    d: D,
    books: Books,
    /// Packets dropped after admission, for [`Qdisc::pop_dropped`].
    dropped: Vec<PacketId>,
}

impl Qdisc {
    /// Builds a discipline for a port of `rate_bps` with capacity `limit`;
    /// `rng` feeds RED's and PIE's coin flips, `seed` FQ-CoDel's hash.
    pub fn new(cfg: &QdiscConfig, limit: QueueLimit, rate_bps: u64, rng: Rng, seed: u64) -> Qdisc {
        Qdisc::around(cfg.build(Env { limit, rate_bps, rng, seed }))
    }

    /// A tail-drop queue.
    pub fn droptail(limit: QueueLimit) -> Qdisc {
        Qdisc::around(AnyDiscipline::DropTail(DropTail::new(limit)))
    }

    /// The old spelling of [`Qdisc::droptail`] (`Qdisc::DropTail(DropTail::new(limit))`,
    /// from when `Qdisc` was the enum), kept until net.rs uses `droptail`.
    #[allow(non_snake_case)]
    #[doc(hidden)]
    pub fn DropTail(q: DropTail) -> Qdisc {
        Qdisc::around(AnyDiscipline::DropTail(q))
    }

    pub fn name(&self) -> &'static str {
        self.d.name()
    }

    #[inline]
    pub fn is_droptail(&self) -> bool {
        matches!(self.d, AnyDiscipline::DropTail(_))
    }
}

impl<D: Discipline> Qdisc<D> {
    pub fn around(d: D) -> Qdisc<D> {
        Qdisc { d, books: Books::default(), dropped: Vec::with_capacity(64) }
    }

    /// Offers a packet whose `enqueued_at` is `now`; false: drop it.
    #[inline]
    pub fn enqueue<P: PacketView>(&mut self, id: PacketId, now: Time, pkts: &mut P) -> bool {
        self.books.arrivals += 1;
        let len = pkts.wire_len(id);
        match self.d.enqueue(id, &mut Cx::new(now, pkts, &mut self.books, &mut self.dropped)) {
            Ok(()) => {
                self.books.admit(len);
                true
            }
            Err(why) => {
                self.books.drops[why as usize] += 1;
                false
            }
        }
    }

    /// The next packet to transmit; packets dropped on the way are left
    /// for [`Qdisc::pop_dropped`].
    #[inline]
    pub fn dequeue<P: PacketView>(&mut self, now: Time, pkts: &mut P) -> Option<PacketId> {
        let id = self.d.dequeue(&mut Cx::new(now, pkts, &mut self.books, &mut self.dropped))?;
        self.books.depart(pkts.wire_len(id), now.saturating_sub(pkts.enqueued_at(id)));
        Some(id)
    }

    /// A packet the discipline dropped after admitting it.
    #[inline]
    pub fn pop_dropped(&mut self) -> Option<PacketId> {
        self.dropped.pop()
    }

    /// Packets queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.books.pkts()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes queued.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.books.bytes()
    }

    /// CE marks so far.
    pub fn marks(&self) -> u64 {
        self.books.marks
    }

    /// Drops the discipline chose (RED/PIE early drops, CoDel head drops),
    /// as opposed to overflow of the buffer.
    pub fn aqm_drops(&self) -> u64 {
        self.books.dropped(DropReason::Aqm)
    }

    /// All the counters.
    pub fn books(&self) -> &Books {
        &self.books
    }

    /// Names of the discipline's state columns in the queue trace.
    pub fn state_names(&self) -> &'static [&'static str] {
        self.d.state_names()
    }

    /// Current values of [`Qdisc::state_names`], in order (NaN past the last).
    pub fn state(&self) -> [f64; MAX_STATE] {
        self.d.state_all()
    }

    /// The discipline itself.
    pub fn discipline(&self) -> &D {
        &self.d
    }

    #[cfg(test)]
    pub(crate) fn discipline_mut(&mut self) -> &mut D {
        &mut self.d
    }
}

#[cfg(test)]
pub(crate) mod testkit {
    use super::*;
    use crate::packet::{ECN_CE, ECN_ECT0, ECN_NOT_ECT};

    /// Packets for unit tests: lengths, enqueue times, ECN codepoints, flow keys.
    pub struct Pkts {
        pub len: Vec<u32>,
        pub enq: Vec<Time>,
        /// The IP header's ECN field ([`crate::packet::ECN_CE`] once marked).
        pub cp: Vec<u8>,
        pub key: Vec<u64>,
    }

    impl Pkts {
        /// `n` packets of `len` bytes, ECT(0) when `ect`, else Not-ECT.
        pub fn new(n: usize, len: u32, ect: bool) -> Pkts {
            Pkts::with_codepoint(n, len, if ect { ECN_ECT0 } else { ECN_NOT_ECT })
        }

        /// `n` packets of `len` bytes with the ECN field `cp`.
        pub fn with_codepoint(n: usize, len: u32, cp: u8) -> Pkts {
            Pkts { len: vec![len; n], enq: vec![0; n], cp: vec![cp; n], key: vec![0; n] }
        }

        /// Packets CE-marked so far.
        pub fn marked(&self) -> usize {
            self.cp.iter().filter(|&&c| c == ECN_CE).count()
        }
    }

    impl PacketView for Pkts {
        fn wire_len(&self, id: PacketId) -> u32 {
            self.len[id as usize]
        }
        fn enqueued_at(&self, id: PacketId) -> Time {
            self.enq[id as usize]
        }
        fn ect(&self, id: PacketId) -> bool {
            self.cp[id as usize] != ECN_NOT_ECT
        }
        fn codepoint(&self, id: PacketId) -> u8 {
            self.cp[id as usize]
        }
        fn set_ce(&mut self, id: PacketId) {
            self.cp[id as usize] = ECN_CE;
        }
        fn flow_key(&self, id: PacketId) -> u64 {
            self.key[id as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::params::{DefaultValue as D, ParamType as T};
    use super::*;

    // params() inverts from_params: every discipline, defaults and given values.
    #[test]
    fn params_round_trip() {
        for info in catalogue() {
            let c = QdiscConfig::from_params(info.name, &[]).unwrap();
            assert_eq!(QdiscConfig::from_params(info.name, &c.params()).unwrap(), c, "{}", info.name);
        }
        let given = [
            ("min_th".to_string(), ParamValue::Float(30.0)),
            ("max_th".to_string(), ParamValue::Float(31.0)),
            ("mode".to_string(), ParamValue::Str("bytes".into())),
            ("gentle".to_string(), ParamValue::Bool(false)),
        ];
        let c = QdiscConfig::from_params("red", &given).unwrap();
        assert_eq!(QdiscConfig::from_params("red", &c.params()).unwrap(), c);
        // Too large for the catalogue's integer ranges: refused, not wrapped.
        let QdiscConfig::Codel(mut codel) = QdiscConfig::from_params("codel", &[]).unwrap() else { unreachable!() };
        codel.target_ns = u64::MAX;
        assert!(QdiscConfig::from_params("codel", &QdiscConfig::Codel(codel).params())
            .unwrap_err()
            .contains("target_ns"));
    }

    #[test]
    fn parse_defaults_and_errors() {
        assert_eq!(QdiscConfig::from_params("red", &[]).unwrap(), QdiscConfig::Red(RedConfig::default()));
        assert_eq!(QdiscConfig::from_params("codel", &[]).unwrap(), QdiscConfig::Codel(CodelConfig::default()));
        assert_eq!(QdiscConfig::from_params("pie", &[]).unwrap(), QdiscConfig::Pie(PieConfig::default()));
        assert_eq!(QdiscConfig::from_params("fq_codel", &[]).unwrap(), QdiscConfig::FqCodel(FqCodelConfig::default()));
        let e = |k: &str, v: ParamValue| QdiscConfig::from_params("red", &[(k.into(), v)]).unwrap_err();
        assert_eq!(e("max_p", ParamValue::Float(1.5)), "max_p: expected a number in [0, 1], got 1.5");
        assert!(e("gentle", ParamValue::Int(1)).contains("expected bool"));
        assert!(e("bogus", ParamValue::Int(1)).contains("unknown parameter"));
        assert!(e("mode", ParamValue::Str("frames".into())).contains("expected one of"));
        assert_eq!(e("min_th", ParamValue::Float(20.0)), "max_th: must exceed min_th (20), got 15");
        let c = |k: &str, v: i64| QdiscConfig::from_params("codel", &[(k.into(), ParamValue::Int(v))]);
        assert_eq!(c("interval_ns", 0).unwrap_err(), "interval_ns: expected an integer in (0, 10000000000000], got 0");
        assert!(c("interval_ns", 1).is_ok());
        assert!(QdiscConfig::from_params("blue", &[]).unwrap_err().contains("unknown qdisc"));
        let c = QdiscConfig::from_params(
            "codel",
            &[("target_ns".into(), ParamValue::Int(2_000_000)), ("ecn".into(), ParamValue::Bool(true))],
        )
        .unwrap();
        assert_eq!(c, QdiscConfig::Codel(CodelConfig { target_ns: 2_000_000, ecn: true, ..CodelConfig::default() }));
    }

    /// The value just past `x` towards `to` (the next float; for integers, ±1).
    fn step(p: &QdiscParam, x: f64, to: f64) -> f64 {
        match p.ty {
            T::Int => x + (to - x).signum(),
            _ if to > x => f64::from_bits(if x == 0.0 {
                1
            } else if x > 0.0 {
                x.to_bits() + 1
            } else {
                x.to_bits() - 1
            }),
            _ => -step(p, -x, -to),
        }
    }

    fn value(p: &QdiscParam, x: f64) -> ParamValue {
        if p.ty == T::Int {
            ParamValue::Int(x as i64)
        } else {
            ParamValue::Float(x)
        }
    }

    // Every number's edges, straight from the table: the last value inside each
    // bound is taken (and the discipline built and fed a few packets), the first
    // outside is refused with a message naming the parameter.
    #[test]
    fn every_range_edge_is_enforced() {
        use testkit::Pkts;
        let mut checked = 0;
        for info in catalogue() {
            for p in info.params.iter().filter(|p| matches!(p.ty, T::Int | T::Float)) {
                let (lo, hi) = (p.min.unwrap(), p.max.unwrap());
                let first = if p.min_open { step(p, lo, hi) } else { lo };
                let last = if p.max_open { step(p, hi, lo) } else { hi };
                for x in [first, last] {
                    let mut given = vec![(p.name.to_string(), value(p, x))];
                    // Keep the relations: a parameter that must exceed this one goes to its maximum.
                    for q in info.params.iter().filter(|q| q.exceeds == Some(p.name)) {
                        given.push((q.name.to_string(), value(q, q.max.unwrap())));
                    }
                    if let Some(other) = p.exceeds {
                        let o = info.params.iter().find(|q| q.name == other).unwrap();
                        given.push((other.to_string(), value(o, o.min.unwrap())));
                    }
                    let cfg = QdiscConfig::from_params(info.name, &given)
                        .unwrap_or_else(|e| panic!("{}.{} = {x} refused: {e}", info.name, p.name));
                    let mut q = Qdisc::new(&cfg, QueueLimit::Packets(8), 10_000_000, Rng::new(1, 1), 1);
                    let mut pk = Pkts::new(16, 1500, true);
                    for i in 0..16u32 {
                        pk.enq[i as usize] = i as Time * 1_000_000;
                        q.enqueue(i, i as Time * 1_000_000, &mut pk);
                    }
                    while q.dequeue(20_000_000_000, &mut pk).is_some() {}
                    while q.pop_dropped().is_some() {}
                }
                for x in [step(p, first, f64::NEG_INFINITY), step(p, last, f64::INFINITY)] {
                    let e = QdiscConfig::from_params(info.name, &[(p.name.into(), value(p, x))]).unwrap_err();
                    assert!(e.starts_with(&format!("{}: expected", p.name)), "{}.{} = {x}: {e}", info.name, p.name);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 50, "{checked}");
    }

    #[test]
    fn the_table_is_complete() {
        for info in catalogue() {
            for p in &info.params {
                let numeric = matches!(p.ty, T::Int | T::Float);
                // Every number has both bounds, and its default lies between them.
                assert_eq!(numeric, p.min.is_some() && p.max.is_some(), "{}.{}", info.name, p.name);
                let default = match p.default {
                    D::Int(i) => i as f64,
                    D::Float(x) => x,
                    _ => continue,
                };
                assert!(p.admits(default), "{}.{}: default {default} outside {}", info.name, p.name, p.range());
                // The unit is the name's suffix (the experiment file's key drops it).
                let unit = if p.name.ends_with("_ns") {
                    Unit::Ns
                } else if p.name.ends_with("_bytes") {
                    Unit::Bytes
                } else {
                    Unit::Plain
                };
                assert_eq!(p.unit, unit, "{}.{}", info.name, p.name);
                assert!(p.unit == Unit::Plain || p.ty == T::Int, "{}.{}", info.name, p.name);
                if let Some(other) = p.exceeds {
                    assert!(info.params.iter().any(|q| q.name == other && q.ty == p.ty), "{}.{}", info.name, p.name);
                }
            }
        }
    }

    // The books balance for every discipline, with its defaults and with ECN,
    // under overload (limit 200 packets, bursts of up to 6 arrivals against 2
    // departures per ms, so that every discipline drops or marks): after every
    // call the packets and bytes held equal those admitted and not yet sent
    // or dropped, arrivals = departures + drops + held, and every mark is a
    // CE bit set.
    #[test]
    fn the_books_balance_for_every_discipline() {
        use std::collections::HashSet;
        use testkit::Pkts;
        const MS: Time = 1_000_000_000;
        for info in catalogue() {
            for ecn in [false, true] {
                // ecn: set ecn = true where the discipline has it.
                let params: Vec<_> = info
                    .params
                    .iter()
                    .filter(|p| p.name == "ecn" && ecn)
                    .map(|p| (p.name.to_string(), ParamValue::Bool(true)))
                    .collect();
                if ecn && params.is_empty() {
                    continue;
                }
                let cfg = QdiscConfig::from_params(info.name, &params).unwrap();
                let mut q = Qdisc::new(&cfg, QueueLimit::Packets(200), 10_000_000, Rng::new(3, 1), 3);
                assert_eq!(q.name(), info.name);
                let n = 20_000;
                let mut pk = Pkts::new(n, 1500, true);
                let mut held = HashSet::new();
                let mut next = 0u32;
                let check = |q: &Qdisc, held: &HashSet<u32>, pk: &Pkts| {
                    let b = q.books();
                    assert_eq!(q.len(), held.len(), "{}", info.name);
                    assert_eq!(
                        q.bytes(),
                        held.iter().map(|&i| pk.len[i as usize] as u64).sum::<u64>(),
                        "{}",
                        info.name
                    );
                    assert_eq!(b.arrivals, b.departures + b.drops.iter().sum::<u64>() + held.len() as u64);
                };
                let drain = |q: &mut Qdisc, held: &mut HashSet<u32>| {
                    while let Some(d) = q.pop_dropped() {
                        assert!(held.remove(&d), "{}: dropped {d} twice or never held", info.name);
                    }
                };
                for ms in 0..3000u64 {
                    let now = ms * MS;
                    for _ in 0..(ms * 7 % 13) / 2 {
                        let i = next as usize;
                        next += 1;
                        (pk.len[i], pk.enq[i], pk.key[i]) = (64 + (i as u32 * 389) % 1437, now, i as u64 % 5);
                        // An admitted packet is held until it leaves (FQ-CoDel may
                        // drop it at once; pop_dropped hands it back).
                        if q.enqueue(i as u32, now, &mut pk) {
                            held.insert(i as u32);
                        }
                        drain(&mut q, &mut held);
                        check(&q, &held, &pk);
                    }
                    for _ in 0..2 {
                        if let Some(id) = q.dequeue(now, &mut pk) {
                            assert!(held.remove(&id), "{}", info.name);
                        }
                        drain(&mut q, &mut held);
                        check(&q, &held, &pk);
                    }
                }
                while let Some(id) = q.dequeue(3000 * MS, &mut pk) {
                    assert!(held.remove(&id));
                    drain(&mut q, &mut held);
                }
                drain(&mut q, &mut held);
                check(&q, &held, &pk);
                assert!(held.is_empty() && q.is_empty() && q.bytes() == 0, "{}", info.name);
                let b = q.books();
                assert_eq!(b.marks, pk.marked() as u64, "{}", info.name);
                assert!(b.departures > 1000 && b.arrivals > b.departures, "{}: {b:?}", info.name);
                assert!(b.sojourn_max > 0 && b.sojourn_total >= b.sojourn_max as u128);
            }
        }
    }

    #[test]
    fn catalogue_defaults_match_the_structs() {
        // Every entry parses with its defaults, and every name is unique.
        for info in catalogue() {
            QdiscConfig::from_params(info.name, &[]).unwrap();
            let mut names: Vec<_> = info.params.iter().map(|p| p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), info.params.len());
        }
    }
}
