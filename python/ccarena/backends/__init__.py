"""Where an experiment runs.

* :mod:`.sim` — the simulator (the compiled engine in ``ccarena._core``);
* :mod:`.emu` — the kernel's TCP through ccarena's link emulator.

Each backend turns a validated :class:`~ccarena.spec.Spec` into the same raw
output (summary counters and columnar traces), from which
:class:`ccarena.Result` is built. A new backend is a module here with a
function ``Spec -> raw`` and a name in :data:`BACKENDS`.
"""

BACKENDS = ("sim", "emu")
"""Where an experiment can run: the simulator, or real TCP through the link emulator."""

__all__ = ["BACKENDS"]
