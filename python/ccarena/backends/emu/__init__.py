"""The emulation backend: an experiment on real Linux TCP through ccarena's link emulator.

``ccarena run FILE --backend emu`` (or ``ccarena.run(FILE, backend="emu")``)
runs the experiment's flows as kernel TCP connections, each with its
algorithm set by ``TCP_CONGESTION``, through an emulated bottleneck with the
experiment's rate, buffer, queue discipline and delays, and writes the same
result folder as the simulator::

    namespace ccarena-snd               root namespace                    namespace ccarena-rcv
    10.77.0.1 ── TUN ccarena-s ◄─fd─► ccarena-emu (SCHED_FIFO) ◄─fd─► TUN ccarena-r ── 10.77.0.2
    one sender socket per flow         qdisc → link rate → delay            one receiver per flow,
                                       (the simulator's queue)              port 5001 + flow id

The emulator (``crates/emu``, binary ``ccarena-emu``) creates both TUN
devices in the root namespace; they are then moved into two network
namespaces made for the run, so all traffic stays between them. Data get
the bottleneck's queue, serialisation at its rate and then the flow's
one-way delay (half its RTT); ACKs cross a reverse port and get the same
delay back. In a network (a parking lot, or links whose paths run along one
line) the emulator routes each packet by its flow through every link of the
flow's path, each link's delay between one link and the next. The emulator
counts, like the simulator, the bytes of each flow leaving the bottleneck
queue per interval, drops and backlog (per link in a network), and measures
RTT samples from the sequence numbers it forwards. With ``[measure]
packets`` it also logs every packet event at its links in that window
(packets.parquet, the simulator's columns; :mod:`ccarena.results.packets`
says what differs).

This process is sender and receiver of every flow: it creates the sockets
inside the namespaces (``setns(2)``), drives bulk, fixed-size and
rate-limited applications from one event loop, and samples ``TCP_INFO``
(cwnd, ssthresh, srtt, in-flight, pacing and delivery rate, retransmits)
at every measurement interval. Everything is torn down at the end, after a
failure, on Ctrl-C and on SIGTERM; a run that was killed outright (SIGKILL)
leaves at most its two namespaces, which the next run removes. Only one
emulated run can be in progress on a machine (a lock in /run/ccarena).

The kernel decides what can be run: its algorithms
(``/proc/sys/net/ipv4/tcp_available_congestion_control``), their module
parameters (shared by every socket, so an experiment may only ask for the
values the kernel has), SACK with PRR and RACK for loss recovery, 52-byte
headers with timestamps (or 40 without). Anything else is refused with one
line before anything starts. The kernel version and the sysctls that matter
are stored in ``summary.json`` under ``emu``.

The package, by concern: :mod:`.checks` (what the kernel can run),
:mod:`.namespaces` (namespaces, sysctls, the lock, clean-up),
:mod:`.config` (the plan and the emulator's configuration),
:mod:`.testbed` (devices and the emulator process), :mod:`.traffic` (the
sockets and their event loop), :mod:`.tcpinfo` (``TCP_INFO`` decoding) and
:mod:`.run` (one run, start to end).
"""

from .checks import check_spec, kernel_algorithms, load_spec
from .common import STATE_FILE, EmuUnavailable, Terminated
from .namespaces import check_environment, cleanup, emulator_binary, leftovers
from .run import emulate, summary_extras

__all__ = [
    "STATE_FILE",
    "EmuUnavailable",
    "Terminated",
    "check_environment",
    "check_spec",
    "cleanup",
    "emulate",
    "emulator_binary",
    "kernel_algorithms",
    "leftovers",
    "load_spec",
    "summary_extras",
]
