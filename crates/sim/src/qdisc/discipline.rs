//! The two traits a discipline implements: [`Discipline`], its queue, and
//! [`QdiscKind`], its configuration (see the module docs of [`super`]).

use super::books::{Cx, DropReason};
use super::params::{Fields, QdiscInfo};
use super::queue::QueueLimit;
use crate::packet::{PacketId, PacketView};
use crate::rng::Rng;
use std::fmt::Debug;

/// A queue discipline: what it does with an arriving packet and which
/// packet it sends next. The books are kept by [`super::Qdisc`].
pub trait Discipline: Debug {
    /// Takes the arriving packet `id` (its `enqueued_at` is `cx.now`), or
    /// refuses it with the reason. It may also mark it, or drop packets it
    /// held ([`Cx::drop`]).
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason>;

    /// The next packet to transmit, if any; packets dropped on the way go
    /// through [`Cx::drop`].
    fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId>;

    /// Names of the state columns for the queue trace (at most
    /// [`MAX_STATE`]); none by default.
    fn state_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// Current values of the first two of [`Discipline::state_names`].
    fn state(&self) -> [f64; 2] {
        [f64::NAN; 2]
    }

    /// Current values of every one of [`Discipline::state_names`], in order
    /// (NaN past the last): by default [`Discipline::state`]'s two. A
    /// discipline with more than two columns provides this instead.
    fn state_all(&self) -> [f64; MAX_STATE] {
        let mut all = [f64::NAN; MAX_STATE];
        all[..2].copy_from_slice(&self.state());
        all
    }
}

/// Most state columns a discipline exports to the queue trace.
pub const MAX_STATE: usize = 8;

/// What a discipline is built from besides its configuration: the port's
/// capacity and rate, and its random streams.
pub struct Env {
    pub limit: QueueLimit,
    pub rate_bps: u64,
    /// RED's and PIE's coin flips.
    pub rng: Rng,
    /// FQ-CoDel's hash perturbation.
    pub seed: u64,
}

/// A discipline's configuration: its name and catalogue entry, its fields
/// and the discipline it builds.
pub trait QdiscKind: Clone + Debug + Default + PartialEq {
    type Qdisc: Discipline;
    /// The experiment file's `kind`.
    const KIND: &'static str;
    /// The catalogue entry (named [`QdiscKind::KIND`]).
    fn info() -> QdiscInfo;
    /// Every field, in the order of [`QdiscKind::info`]'s parameters.
    fn fields(&mut self, f: &mut Fields) -> Result<(), String>;
    fn build(&self, env: Env) -> Self::Qdisc;
}
