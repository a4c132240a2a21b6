"""The experiment file's keys, in one place.

Every table of an experiment file is a :class:`Table` here: its keys, what
each holds, its default and a line of documentation. The validator
(:mod:`ccarena.spec.resolve` and the section modules beside it) takes the
known keys and the defaults from these tables, and :func:`json_schema`
turns the same tables into a JSON Schema (draft 7) of the file, for editors
(taplo / Even Better TOML, VS Code) and for ``ccarena schema``.

A new experiment key goes into the table here and into the section module
that resolves it (``topology.py``, ``tcp.py``, ``flows.py``,
``background.py``, ``measure.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .units import BYTES_PATTERN, RATE_PATTERN, SIZE_PATTERN, TIME_PATTERN

__all__ = [
    "BACKGROUND",
    "BOTTLENECK",
    "EXPERIMENT",
    "FLOW",
    "LOSS_MODELS",
    "MEASURE",
    "ONOFF",
    "REVERSE",
    "RTT_DISTS",
    "SIZE_DISTS",
    "START_DISTS",
    "TCP",
    "TOPOLOGY",
    "UDP",
    "WEB",
    "Field",
    "Table",
    "json_schema",
]


@dataclass(frozen=True)
class Field:
    """One key of a table.

    ``type`` is one of: ``time``, ``rate``, ``size`` (bytes, packets or a BDP
    fraction), ``bytes``, ``int``, ``number``, ``bool``, ``string``,
    ``name`` (letters, digits, ``._+-``), ``choice`` (one of ``choices``),
    ``algorithm`` (a name in the engine's registry, ``ccarena list cc``),
    ``table`` (the nested ``table``), ``qdisc_params`` (the parameters of the
    queue discipline named in ``choices``), ``tables`` (a list of ``table``; with
    ``single`` a lone table is accepted too), ``params`` (algorithm
    parameters), ``loss`` (a probability or a :data:`LOSS_MODELS` table),
    ``size_dist`` (a :data:`SIZE_DISTS` table; with ``choices`` also one of
    those names), ``rtt_dist`` (a time or an :data:`RTT_DISTS` table) and
    ``start`` (a time or a :data:`START_DISTS` table), ``times`` (a list of
    two times), ``names`` (a list of strings) and ``groups`` (a list of flow
    group indices).
    """

    type: str
    doc: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    lo: float | None = None
    hi: float | None = None
    table: Table | None = None
    single: bool = False


@dataclass(frozen=True)
class Table:
    """A TOML table: its keys in file order, and a line of documentation."""

    fields: Mapping[str, Field]
    doc: str = ""
    discriminator: str | None = field(default=None)

    @property
    def names(self) -> tuple[str, ...]:
        """The known keys."""
        return tuple(self.fields)

    def default(self, key: str) -> Any:
        """The default of ``key``."""
        return self.fields[key].default


def _t(doc: str, fields: Mapping[str, Field], discriminator: str | None = None) -> Table:
    return Table(dict(fields), doc, discriminator)


# ---------------------------------------------------------------------------
# Distributions and loss models: tables told apart by one key.

LOSS_MODELS: dict[str, Table] = {
    "bernoulli": _t(
        "each data packet is lost with probability p",
        {"model": Field("choice", "loss model", choices=("bernoulli",), required=True),
         "p": Field("number", "loss probability", lo=0.0, hi=1.0, required=True)},
        "model",
    ),
    "gilbert": _t(
        "Gilbert-Elliott bursty loss: a good and a bad state",
        {"model": Field("choice", "loss model", choices=("gilbert",), required=True),
         "p_gb": Field("number", "per-packet probability of going from good to bad", lo=0.0, hi=1.0, required=True),
         "p_bg": Field("number", "per-packet probability of going from bad to good", lo=0.0, hi=1.0, required=True),
         "loss_good": Field("number", "loss probability in the good state", default=0.0, lo=0.0, hi=1.0),
         "loss_bad": Field("number", "loss probability in the bad state", default=1.0, lo=0.0, hi=1.0)},
        "model",
    ),
    "periodic": _t(
        "deterministic loss: every round(1/p)-th data packet",
        {"model": Field("choice", "loss model", choices=("periodic",), required=True),
         "p": Field("number", "loss rate", lo=0.0, hi=1.0, required=True)},
        "model",
    ),
}

_DIST = "dist"
SIZE_DISTS: dict[str, Table] = {
    "surge": _t(
        "SURGE: a lognormal body of ln bytes with probability body, else a Pareto tail",
        {_DIST: Field("choice", "distribution", choices=("surge",), required=True),
         "body": Field("number", "probability of the lognormal body", default=0.93, lo=0.0, hi=1.0),
         "mu": Field("number", "mean of ln bytes in the body", default=9.357),
         "sigma": Field("number", "standard deviation of ln bytes in the body", default=1.328, lo=0.0),
         "tail_min": Field("size", "smallest size of the Pareto tail", default="133KB"),
         "tail_shape": Field("number", "Pareto shape of the tail", default=1.1, lo=0.0)},
        _DIST,
    ),
    "pareto": _t(
        "Pareto sizes, given by their mean or their minimum",
        {_DIST: Field("choice", "distribution", choices=("pareto",), required=True),
         "mean": Field("size", "mean size (bytes or pkts)"),
         "min": Field("size", "smallest size (bytes or pkts)"),
         "shape": Field("number", "Pareto shape", required=True, lo=0.0)},
        _DIST,
    ),
    "lognormal": _t(
        "lognormal sizes: ln bytes ~ Normal(mu, sigma)",
        {_DIST: Field("choice", "distribution", choices=("lognormal",), required=True),
         "mu": Field("number", "mean of ln bytes", required=True),
         "sigma": Field("number", "standard deviation of ln bytes", required=True, lo=0.0)},
        _DIST,
    ),
    "fixed": _t(
        "every transfer the same size",
        {_DIST: Field("choice", "distribution", choices=("fixed",), required=True),
         "size": Field("size", "the size (bytes or pkts)", required=True)},
        _DIST,
    ),
    "exponential": _t(
        "exponential sizes",
        {_DIST: Field("choice", "distribution", choices=("exponential",), required=True),
         "mean": Field("size", "mean size (bytes or pkts)", required=True)},
        _DIST,
    ),
}

RTT_DISTS: dict[str, Table] = {
    "fixed": _t(
        "one RTT for every transfer",
        {_DIST: Field("choice", "distribution", choices=("fixed",), required=True),
         "rtt": Field("time", "the RTT", required=True)},
        _DIST,
    ),
    "exponential": _t(
        "min + 2·Exp(mean_one_way) per transfer",
        {_DIST: Field("choice", "distribution", choices=("exponential",), required=True),
         "mean_one_way": Field("time", "mean one-way delay", required=True),
         "min": Field("time", "smallest RTT", default="0s")},
        _DIST,
    ),
    "uniform": _t(
        "uniform between lo and hi per transfer",
        {_DIST: Field("choice", "distribution", choices=("uniform",), required=True),
         "lo": Field("time", "smallest RTT", required=True),
         "hi": Field("time", "largest RTT", required=True)},
        _DIST,
    ),
}

START_DISTS: dict[str, Table] = {
    "uniform": _t(
        "each flow of the group starts at a time drawn uniformly in [lo, hi] from the run's seed",
        {_DIST: Field("choice", "distribution", choices=("uniform",), required=True),
         "lo": Field("time", "earliest start", required=True),
         "hi": Field("time", "latest start", required=True)},
        _DIST,
    ),
}

# ---------------------------------------------------------------------------
# The experiment

def _qdisc_catalogue() -> tuple[dict[str, Any], ...]:
    from .. import _core

    return tuple(dict(q) for q in _core.qdisc_catalogue())


QDISC_CATALOGUE = _qdisc_catalogue()
"""The engine's queue disciplines with their parameters (``ccarena list qdisc``)."""
QDISCS = tuple(str(q["name"]) for q in QDISC_CATALOGUE)
APPS = ("bulk", "fixed", "rate")
RECOVERIES = ("prr", "newreno")
RECEIVE_WINDOWS = ("fixed", "linux")
DIRECTIONS = ("forward", "reverse", "both")
UDP_PATTERNS = ("cbr", "poisson")

JITTER = _t(
    "extra delay per packet after the link (order-preserving unless reorder = true)",
    {"dist": Field("choice", "distribution of the extra delay", default="uniform",
                   choices=("uniform", "exponential", "normal")),
     "max": Field("time", "uniform: the largest extra delay (draws are uniform on [0, max])"),
     "mean": Field("time", "exponential and normal: the mean extra delay"),
     "sd": Field("time", "normal: the standard deviation (negative draws count as 0)"),
     "reorder": Field("bool", "packets keep their own draws and may overtake each other", default=False)},
)

ACK_AGGREGATION = _t(
    "arrivals held and released into the link's queue in batches: every T, or N at a time",
    {"every": Field("time", "release every this long (at phase + k·every)"),
     "phase": Field("time", "offset of the releases", default="0s"),
     "count": Field("int", "release once this many are held", lo=1, hi=1_000_000),
     "timeout": Field("time", "with count: release this long after a batch's first packet at the latest")},
)

BUCKET = _t(
    "a token bucket: fills at rate, holds at most burst bytes, starts full",
    {"rate": Field("rate", "token rate", required=True),
     "burst": Field("bytes", "bucket depth", required=True)},
)

LINK_MODEL_FIELDS = {
    "trace": Field("string", "capacity from a Mahimahi trace file (or a shipped trace's name: ccarena list traces)"),
    "trace_mode": Field("choice", "mahimahi: mm-link's byte accounting; ideal: IP bytes and exact times",
                        default="mahimahi", choices=("mahimahi", "ideal")),
    "trace_once": Field("bool", "deliver nothing after one pass of the trace", default=False),
    "jitter": Field("table", "extra delay per packet after the link", table=JITTER),
    "ack_aggregation": Field("table", "hold arrivals and release them in batches", table=ACK_AGGREGATION),
    "policer": Field("table", "drop what exceeds a token bucket", table=BUCKET),
    "shaper": Field("table", "hold the queue's head until a token bucket has its tokens", table=BUCKET),
}

BOTTLENECK = _t(
    "the bottleneck link: its rate, buffer, queue discipline, own delay and random loss",
    {
        "rate": Field("rate_schedule", "link rate, or a schedule [[time, rate], ...] (required unless trace)"),
        "buffer": Field("size", "buffer: packets, bytes or a fraction of the BDP", required=True),
        "qdisc": Field("choice", "queue discipline", default="droptail", choices=QDISCS),
        "delay": Field("delay_schedule", "one-way propagation delay of the link itself, or a schedule "
                       "[[time, delay], ...]", default="0s"),
        "loss": Field("loss", "random loss of data packets", default=0.0),
        **LINK_MODEL_FIELDS,
        **{
            str(q["name"]): Field("qdisc_params", f"parameters of {q['name']} (with qdisc = \"{q['name']}\")",
                                  choices=(str(q["name"]),))
            for q in QDISC_CATALOGUE
            if q["params"]
        },
    },
)

REVERSE = _t(
    "the ACK direction (defaults to the bottleneck's rate and buffer, no loss)",
    {
        "rate": Field("rate_schedule", "link rate, or a schedule [[time, rate], ...]"),
        "buffer": Field("size", "buffer: packets, bytes or a fraction of the BDP"),
        "loss": Field("loss", "random loss of data packets"),
        **LINK_MODEL_FIELDS,
    },
)

NETWORK_KINDS = ("dumbbell", "parking_lot", "links")
HOST_ERAS = ("linux-2.6", "linux-today")
"""Shapes of ``[topology]``: one bottleneck, a line of links, or links named one by one."""

HOP = _t(
    "one hop of a parking lot (overrides topology.link for it)",
    {k: Field(f.type, f.doc, choices=f.choices, table=f.table) for k, f in BOTTLENECK.fields.items()},
)

LINK = _t(
    "one link of the network, and its reverse twin <name>_rev that carries the other direction",
    {
        "name": Field("name", "the link's name, used in flow paths", required=True),
        **BOTTLENECK.fields,
        "from": Field("name", "the node the link leaves (optional; paths are checked to be connected)"),
        "to": Field("name", "the node the link enters"),
        "reverse": Field("table", "the twin <name>_rev (defaults: this link's rate and buffer, no loss)",
                         table=REVERSE),
    },
)

TOPOLOGY = _t(
    "the network: a dumbbell (every flow crosses the bottleneck), a parking lot, or links and paths",
    {
        "kind": Field("choice", "dumbbell; parking_lot (hops links in a line); links ([[topology.links]])",
                      default="dumbbell", choices=NETWORK_KINDS),
        "rtt": Field("time", "base round-trip propagation delay; flows may override (default in a parking "
                     "lot or links: twice the delay of each flow's own path)"),
        "bottleneck": Field("table", "the bottleneck link (required for a dumbbell)", table=BOTTLENECK),
        "reverse": Field("table", "the reverse (ACK) link", table=REVERSE),
        "hops": Field("int", "parking_lot: the number of links in the line (named hop1, hop2, ...)", lo=1, hi=64),
        "link": Field("table", "parking_lot: every hop's link", table=BOTTLENECK),
        "hop": Field("tables", "parking_lot: per-hop overrides of link, one table per hop", table=HOP),
        "links": Field("tables", "links: the links, each with a name", table=LINK),
    },
)

HOST = _t(
    "the sending host: an access link at the NIC's rate with its queue, and TSO bursts (Linux 2.6, or today's "
    "Linux with TCP Small Queues)",
    {
        "nic": Field("rate", "the NIC's rate (required, e.g. \"1Gbps\")"),
        "txqueuelen": Field("int", "the host queue in front of the NIC, packets", default=1000, lo=1, hi=1_000_000),
        "era": Field("choice", "linux-2.6: 64 KB super-packets, no TCP Small Queues; linux-today: super-packets "
                     "of about 1 ms of the pacing rate (tcp_tso_autosize, 5.18+) and TCP Small Queues",
                     default="linux-2.6", choices=HOST_ERAS),
        "tso": Field("bool", "unpaced senders send super-packets (TSO) and defer small ones: 64 KB ones as Linux "
                     "2.6, about 1 ms of the pacing rate as today's Linux", default=True),
        "tso_segs": Field("int", "segments in a full super-packet, the most with linux-today (default: those "
                          "fitting 65535 - 320 bytes)", lo=1, hi=65535),
        "tso_win_divisor": Field("int", "send once a 1/divisor of the window is open (tcp_tso_win_divisor)",
                                 default=3, lo=1, hi=1000),
        "tso_defer": Field("time", "longest wait for more ACKs (two jiffies; era linux-2.6 only)", default="2ms"),
        "tsq_limit": Field("bytes", "TCP Small Queues: most an unpaced socket keeps below TCP "
                           "(tcp_limit_output_bytes; era linux-today only)", default="1MiB"),
    },
)

TCP = _t(
    "TCP settings for every flow",
    {
        "mss": Field("int", "payload bytes per packet", default=1448, lo=1, hi=65535),
        "header": Field("int", "header bytes per packet", default=52, lo=0, hi=1000),
        "init_cwnd": Field("int", "initial window, packets", default=10, lo=1, hi=1_000_000),
        "rwnd": Field("bytes", "receive-window limit (default 1 GiB, the largest a TCP receiver advertises, RFC 7323)"),
        "pacing": Field("bool", "pace every flow (default: only algorithms that need it, e.g. bbr)", default=False),
        "recovery": Field("choice", "loss recovery (default: the algorithm's)", choices=RECOVERIES),
        "ecn": Field(
            "bool",
            "negotiate ECN (RFC 3168): data sent ECT, CE echoed, one window cut per RTT instead of a loss; "
            "needs a marking queue (qdisc with ecn = true); always on for algorithms that need it (dctcp)",
            default=False,
        ),
        "accecn": Field(
            "bool",
            "offer AccECN feedback (RFC 9768; implies ecn): the receiver counts every CE-marked packet and byte "
            "and the sender reads the exact count from each ACK; always on for algorithms that need it (prague)",
            default=False,
        ),
        "receiver_accecn": Field(
            "bool",
            "the receivers support AccECN; when false an AccECN offer falls back to RFC 3168 feedback "
            "(algorithms that need AccECN, prague, then run as Reno without ECN)",
            default=True,
        ),
        "accecn_option": Field(
            "bool", "with AccECN the receivers' ACKs carry the AccECN option (byte counters) besides ACE",
            default=True,
        ),
        "sack_compression": Field(
            "bool",
            "the receivers compress SACKs as Linux's do since 4.18 (net/ipv4/tcp_input.c, __tcp_ack_snd_check): "
            "with data held above a hole, after three duplicate ACKs per cumulative ACK they hold further ACKs "
            "(at most comp_sack_nr) for min(comp_sack_delay, 5 % of the base RTT) and send one with the "
            "current SACK blocks; false: every out-of-order segment is acknowledged at once. The emu backend sets "
            "the same in the receivers' namespace (tcp_comp_sack_nr 0 when off; one setting for every group). "
            "Default: on, as today's Linux receivers do, but off where the hosts are Linux 2.6's "
            "(host.era = \"linux-2.6\", which had none)",
        ),
        "receive_window": Field(
            "choice",
            "the receivers' window: \"fixed\" advertises none (the senders are held by rwnd alone, ACKs follow the "
            "delayed-ACK rules); \"linux\" is Linux 6.x's: 10 segments at first, grown by two segments per "
            "arriving segment up to a clamp that receive-buffer autotuning raises once per RTT (tcp_rmem 131072 "
            "and 32 MiB), each growth acknowledged at once (net/ipv4/tcp_input.c, tcp_grow_window and "
            "tcp_rcv_space_adjust). Flow groups only: background sources' receivers keep the fixed window. The emu "
            "backend runs the kernel's receivers, which always do the latter",
            default="fixed",
            choices=RECEIVE_WINDOWS,
        ),
        "comp_sack_nr": Field("int", "with sack_compression, most ACKs held (Linux tcp_comp_sack_nr; 0: none held)",
                              default=44, lo=0, hi=255),
        "comp_sack_delay": Field("time", "with sack_compression, longest hold (Linux tcp_comp_sack_delay_ns)",
                                 default="1ms"),
        "host": Field("table", "every sender's host (see flows.host)", table=HOST),
    },
)

MAX_FLOWS = 100_000

FLOW = _t(
    "a group of identical flows",
    {
        "cc": Field("algorithm", "congestion-control algorithm (see `ccarena list cc`)", required=True),
        "count": Field("int", "number of flows in the group", default=1, lo=1, hi=MAX_FLOWS),
        "params": Field("params", "algorithm parameters", default={}),
        "start": Field("start", "start time, or a distribution of start times drawn per flow", default="0s"),
        "stop": Field("time", "stop time (default: the end of the run)"),
        "rtt": Field("time", "round-trip propagation delay (default: topology.rtt)"),
        "app": Field("choice", "application: bulk, a fixed-size transfer, or a fixed rate", default="bulk", choices=APPS),
        "size": Field("bytes", 'bytes to send, with app = "fixed"'),
        "rate": Field("rate", 'sending rate, with app = "rate"'),
        "reverse": Field("bool", "data cross the reverse link (and the ACKs the bottleneck)", default=False),
        "path": Field("names", "parking_lot or links: the links the data cross, in order (default in a "
                      "parking lot: every hop)"),
        "ack_path": Field("names", "the links the ACKs cross (default: the path's reverse twins, last first)"),
        "every": Field("time", "start flow k of the group at start + k·every"),
        "mss": Field("int", "payload bytes per packet (default: tcp.mss)", lo=1, hi=65535),
        "init_cwnd": Field("int", "initial window, packets (default: tcp.init_cwnd)", lo=1, hi=1_000_000),
        "rwnd": Field("bytes", "receive-window limit (default: tcp.rwnd)"),
        "pacing": Field("bool", "pace the flows (default: tcp.pacing or the algorithm's need)"),
        "recovery": Field("choice", "loss recovery (default: tcp.recovery or the algorithm's)", choices=RECOVERIES),
        "ecn": Field("bool", "negotiate ECN (default: tcp.ecn; always on for algorithms that need it)"),
        "accecn": Field("bool", "offer AccECN feedback, RFC 9768 (default: tcp.accecn; always on for algorithms "
                        "that need it)"),
        "receiver_accecn": Field("bool", "the receivers support AccECN (default: tcp.receiver_accecn)"),
        "accecn_option": Field("bool", "with AccECN, ACKs carry the AccECN option (default: tcp.accecn_option)"),
        "receive_window": Field("choice", "the receivers' window, \"fixed\" or \"linux\" (default: tcp.receive_window)",
                                choices=RECEIVE_WINDOWS),
        "sack_compression": Field("bool", "the receivers compress SACKs as Linux's do since 4.18 "
                                  "(default: tcp.sack_compression, else on unless the group's host is Linux 2.6's; "
                                  "tcp.comp_sack_nr and tcp.comp_sack_delay apply)"),
        "host": Field("table", "the senders' host: NIC rate, host queue and TSO (default: tcp.host; none)",
                      table=HOST),
    },
)

_SOURCE_TCP: dict[str, Field] = {
    "name": Field("name", "the source's name (default: kind and index)"),
    "cc": Field("algorithm", "congestion-control algorithm of its transfers", default="reno"),
    "params": Field("params", "algorithm parameters", default={}),
    "rtt": Field("rtt_dist", "RTT of each transfer: a time or a distribution (default: topology.rtt)"),
    "direction": Field("choice", "which way the data go", default="forward", choices=DIRECTIONS),
    "start": Field("time", "when the source starts", default="0s"),
    "stop": Field("time", "when it stops starting transfers (default: the end of the run)"),
    "mss": Field("int", "payload bytes per packet (default: tcp.mss)", lo=1, hi=65535),
    "init_cwnd": Field("int", "initial window, packets (default: tcp.init_cwnd)", lo=1, hi=1_000_000),
    "pacing": Field("bool", "pace the transfers (default: tcp.pacing)"),
    "ecn": Field("bool", "negotiate ECN (default: tcp.ecn; always on for algorithms that need it)"),
    "path": Field("names", "in a parking lot or a list of links: the links its transfers' data cross "
                  "(default: the measured link)"),
    "ack_path": Field("names", "with path: the links the ACKs cross (default: the twins of path, last first)"),
    "host": Field("table", "the sending hosts: one per direction the source sends in, its transfers sharing its "
                  "NIC and host queue, each sending with its TSO (see flows.host; tcp.host does not apply; default: "
                  "none)", table=HOST),
}

WEB = _t(
    "short TCP transfers, one fresh connection each",
    {
        "sessions": Field("int", "closed-loop sessions: fetch an object, think, repeat", lo=1, hi=MAX_FLOWS),
        "think": Field("time", "mean (exponential) think time of a session", default="1s"),
        "rate": Field("number", "Poisson transfers per second", lo=0.0, hi=1e7),
        "load": Field("number", "Poisson arrivals at this fraction of the link rate", lo=0.0, hi=100.0),
        "sizes": Field("size_dist", '"surge" or a size distribution', default="surge", choices=("surge",)),
        "size_body": Field("number", 'with sizes = "surge": probability of the lognormal body', lo=0.0, hi=1.0),
        "size_mu": Field("number", 'with sizes = "surge": mean of ln bytes in the body'),
        "size_sigma": Field("number", 'with sizes = "surge": standard deviation of ln bytes', lo=0.0),
        "size_tail_min": Field("size", 'with sizes = "surge": smallest size of the Pareto tail'),
        "size_tail_shape": Field("number", 'with sizes = "surge": Pareto shape of the tail', lo=0.0),
        "bidirectional": Field("bool", 'true: the same as direction = "both"'),
        **_SOURCE_TCP,
    },
)

ONOFF = _t(
    "on-off sessions: a transfer, then an exponential off time",
    {
        "sessions": Field("int", "number of sessions", required=True, lo=1, hi=MAX_FLOWS),
        "size": Field(
            "size_dist", "transfer sizes", default={"dist": "pareto", "mean": "100pkts", "shape": 1.2}
        ),
        "off": Field("time", "mean off time", default="10s"),
        **_SOURCE_TCP,
    },
)

UDP = _t(
    "unresponsive load",
    {
        "name": Field("name", "the source's name (default: kind and index)"),
        "rate": Field("rate", "sending rate"),
        "load": Field("number", "sending rate as a fraction of the link rate", lo=0.0, hi=100.0),
        "pattern": Field("choice", "evenly spaced or Poisson", default="cbr", choices=UDP_PATTERNS),
        "packet": Field("bytes", "wire bytes per datagram", default="1500B"),
        "direction": Field("choice", "which way the datagrams go", default="forward", choices=DIRECTIONS),
        "path": Field("names", "in a parking lot or a list of links: the one link the datagrams cross "
                      "(default: the measured link)"),
        "start": Field("time", "when the source starts", default="0s"),
        "stop": Field("time", "when it stops (default: the end of the run)"),
    },
)

BACKGROUND = _t(
    "background traffic sources",
    {
        "web": Field("tables", "web sessions", table=WEB, single=True),
        "onoff": Field("tables", "on-off sessions", table=ONOFF, single=True),
        "udp": Field("tables", "unresponsive UDP load", table=UDP, single=True),
    },
)

CONVERGENCE = _t(
    "convergence time: from a flow's start until every flow stays within delta of its fair share",
    {
        "delta": Field("number", "allowed relative distance from the fair share", default=0.2, lo=0.0, hi=1.0),
        "hold": Field("time", "how long the flows must stay there", default="1s"),
        "jain": Field("number", "Jain's index threshold of the second definition", default=0.95, lo=0.0, hi=1.0),
    },
)

MEASURE = _t(
    "what is recorded and how the metrics are taken",
    {
        "interval": Field("time", "trace interval, 1 ms to the duration", default="100ms"),
        "trace": Field("bool", "record per-interval traces", default=True),
        "window": Field("times", "[from, to]: the window of every steady-state metric (default: the second half)"),
        "packets": Field("times", "[from, to]: log every packet event at the links in this window to packets.parquet "
                         "(enqueue, dequeue, drop, mark, deliver; off by default; the emu backend logs what the "
                         "kernel's TCP sends through the emulated links)"),
        "average": Field("time", "averaging window of convergence and responsiveness", default="1s"),
        "link": Field("name", "parking_lot or links: the link where rates at the bottleneck are counted and that "
                      "summary.json's queue describes (default: the slowest link flows cross; a flow not on it: "
                      "its own slowest)"),
        "standard": Field("names", "algorithms counted as standard TCP for friendliness", default=["reno", "newreno"]),
        "standard_groups": Field("groups", "flow groups counted as standard TCP instead (indices of [[flows]])"),
        "rtt_fairness": Field("groups", "[short, long]: the flow groups compared (default: smallest and largest RTT)"),
        "convergence": Field("table", "convergence-time parameters", table=CONVERGENCE),
    },
)

EXPERIMENT = _t(
    "a ccarena experiment",
    {
        "name": Field("name", "the experiment's name (default: the file name)"),
        "duration": Field("time", "length of the run", required=True),
        "seed": Field("int", "random seed", default=1, lo=0, hi=2**63 - 1),
        "ccarena_version": Field("string", "the ccarena version that resolved the file (written in spec.toml)"),
        "cc_module": Field("string", "a module name or .py file (relative to the experiment file), or a list of "
                           "them, that registers congestion-control algorithms written in Python "
                           "(ccarena.register_cc) when imported; imported before the flows are checked, "
                           "and by every sweep worker"),
        "topology": Field("table", "the network", required=True, table=TOPOLOGY),
        "tcp": Field("table", "TCP settings for every flow", table=TCP),
        "flows": Field("tables", "flow groups", table=FLOW),
        "background": Field("table", "background traffic", table=BACKGROUND),
        "measure": Field("table", "measurement", table=MEASURE),
    },
)


# ---------------------------------------------------------------------------
# JSON Schema

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$"
_STRING_PATTERNS = {"time": TIME_PATTERN, "rate": RATE_PATTERN, "size": SIZE_PATTERN, "bytes": BYTES_PATTERN}


def _table_schema(table: Table, algorithms: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    props = {k: _field_schema(f, algorithms) for k, f in table.fields.items()}
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if table.doc:
        out["description"] = table.doc
    required = [k for k, f in table.fields.items() if f.required]
    if required:
        out["required"] = required
    if table is FLOW and algorithms:
        out["allOf"] = [_params_rule(a) for a in algorithms]
    return out


def _params_rule(algorithm: Mapping[str, Any]) -> dict[str, Any]:
    """``if cc = NAME then params`` holds only NAME's parameters, with their types and ranges."""
    props: dict[str, Any] = {}
    for p in algorithm.get("params") or ():
        kind = p["type"]
        s: dict[str, Any]
        if kind == "bool":
            s = {"type": "boolean"}
        elif kind == "choice":
            s = {"enum": list(p.get("choices") or [])}
        else:
            s = {"type": "integer" if kind == "int" else "number"}
            if p.get("min") is not None:
                s["minimum"] = p["min"]
            if p.get("max") is not None:
                s["maximum"] = p["max"]
        s["description"] = str(p.get("doc", ""))
        s["default"] = p.get("default")
        props[str(p["name"])] = s
    return {
        "if": {"properties": {"cc": {"const": algorithm["name"]}}, "required": ["cc"]},
        "then": {"properties": {"params": {"type": "object", "properties": props, "additionalProperties": False}}},
    }


def _field_schema(f: Field, algorithms: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    s: dict[str, Any]
    t = f.type
    if t in _STRING_PATTERNS:
        s = {"type": "string", "pattern": _STRING_PATTERNS[t]}
    elif t == "name":
        s = {"type": "string", "pattern": NAME_PATTERN}
    elif t == "string":
        s = {"type": "string"}
    elif t == "algorithm":
        s = {"enum": _algorithm_names(algorithms)}
    elif t == "bool":
        s = {"type": "boolean"}
    elif t in ("rate_schedule", "delay_schedule"):
        one = {"type": "string", "pattern": _STRING_PATTERNS["rate" if t == "rate_schedule" else "time"]}
        step = {"type": "array", "prefixItems": [{"type": "string", "pattern": TIME_PATTERN}, one],
                "minItems": 2, "maxItems": 2}
        s = {"anyOf": [one, {"type": "array", "items": step, "minItems": 1}]}
    elif t == "times":
        s = {"type": "array", "items": {"type": "string", "pattern": TIME_PATTERN}, "minItems": 2, "maxItems": 2}
    elif t == "names":
        s = {"type": "array", "items": {"type": "string"}}
    elif t == "groups":
        s = {"type": "array", "items": {"type": "integer", "minimum": 0}}
    elif t in ("int", "number"):
        s = {"type": "integer" if t == "int" else "number"}
        if f.lo is not None:
            s["minimum"] = f.lo
        if f.hi is not None:
            s["maximum"] = f.hi
    elif t == "choice":
        s = {"enum": list(f.choices)}
    elif t == "table":
        assert f.table is not None
        s = _table_schema(f.table, algorithms)
    elif t == "tables":
        assert f.table is not None
        item = _table_schema(f.table, algorithms)
        s = {"anyOf": [item, {"type": "array", "items": item}]} if f.single else {"type": "array", "items": item}
    elif t == "qdisc_params":
        q = next(q for q in QDISC_CATALOGUE if q["name"] == f.choices[0])
        s = {"type": "object", "properties": {qdisc_key(p): _qdisc_param_schema(p) for p in q["params"]},
             "additionalProperties": False}
    elif t == "params":
        s = {"type": "object", "additionalProperties": {"type": ["boolean", "number", "string"]}}
    elif t == "loss":
        s = {"anyOf": [{"type": "number", "minimum": 0, "exclusiveMaximum": 1}]
             + [_table_schema(m, algorithms) for m in LOSS_MODELS.values()]}
    elif t == "size_dist":
        tables = [_table_schema(d, algorithms) for d in SIZE_DISTS.values()]
        s = {"anyOf": ([{"enum": list(f.choices)}] if f.choices else []) + tables}
    elif t == "start":
        s = {"anyOf": [{"type": "string", "pattern": TIME_PATTERN}]
             + [_table_schema(d, algorithms) for d in START_DISTS.values()]}
    elif t == "rtt_dist":
        s = {"anyOf": [{"type": "string", "pattern": TIME_PATTERN}]
             + [_table_schema(d, algorithms) for d in RTT_DISTS.values()]}
    else:  # pragma: no cover - a programming error in the tables above
        raise ValueError(f"unknown field type {t!r}")
    s["description"] = f.doc
    if f.default is not None and t not in ("table", "tables"):
        s["default"] = f.default
    return s


def _algorithm_names(algorithms: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of ``algorithms``, or of every algorithm of the engine's registry when none are given."""
    if not algorithms:
        from .. import _core

        algorithms = _core.cc_algorithms()
    return [str(a["name"]) for a in algorithms]


def qdisc_key(param: Mapping[str, Any]) -> str:
    """The file's key of a queue-discipline parameter: ``target_ns`` is written ``target = "5ms"``,
    ``mtu_bytes`` ``mtu = "1514B"``; the others as the engine names them."""
    name = str(param["name"])
    return name.removesuffix("_ns").removesuffix("_bytes")


def qdisc_unit(param: Mapping[str, Any]) -> str | None:
    """"time" or "bytes" for parameters the file writes with a unit, else None."""
    name = str(param["name"])
    return "time" if name.endswith("_ns") else "bytes" if name.endswith("_bytes") else None


def _qdisc_param_schema(p: Mapping[str, Any]) -> dict[str, Any]:
    unit = qdisc_unit(p)
    if unit is not None:
        s: dict[str, Any] = {"type": "string", "pattern": TIME_PATTERN if unit == "time" else BYTES_PATTERN}
    elif p["type"] == "bool":
        s = {"type": "boolean"}
    elif p["type"] == "choice":
        s = {"enum": list(p.get("choices") or [])}
    else:
        s = {"type": "integer" if p["type"] == "int" else "number"}
        if p.get("min") is not None:
            s["minimum"] = p["min"]
        if p.get("max") is not None:
            s["maximum"] = p["max"]
    s["description"] = str(p.get("doc", ""))
    return s


def json_schema(algorithms: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The JSON Schema (draft 7) of an experiment file.

    ``cc`` is one of the engine's algorithms and ``qdisc`` one of its queue
    disciplines (both from the engine's tables). With ``algorithms``
    (``ccarena.algorithms()``) each flow group's ``params`` is checked
    against its algorithm's parameters. A campaign's
    ``[sweep]`` table is allowed (field paths with lists of values, ``zip``,
    ``repeat``, ``baseline``); see :mod:`ccarena.campaign.grid`.
    """
    out: dict[str, Any] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "ccarena experiment",
    }
    out.update(_table_schema(EXPERIMENT, algorithms))
    out["properties"]["sweep"] = {
        "type": "object",
        "description": "a campaign: field paths (as --set takes them) with lists of values; their product is the grid",
        "properties": {
            "zip": {"type": "array", "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "description": "groups of swept paths that vary together"},
            "repeat": {"type": "integer", "minimum": 1, "description": "runs per point", "default": 1},
            "baseline": {"anyOf": [{"enum": _algorithm_names(algorithms)},
                                   {"type": "array", "items": {"enum": _algorithm_names(algorithms)}}],
                         "description": "every point also run with every flow on this algorithm"},
        },
        "additionalProperties": {"type": "array", "minItems": 1},
    }
    return out
