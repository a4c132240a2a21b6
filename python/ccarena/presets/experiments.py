"""The published experiments: one :class:`Preset` per experiment ID, by paper.

* A — :mod:`.rhee_xu_2005`: Rhee and Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", PFLDnet 2005 (talk);
* B — :mod:`.leith_2007`: Leith, Shorten and McCullagh, "Experimental evaluation of Cubic TCP", PFLDnet 2007;
* C — :mod:`.rhee_2007`: Rhee's rebuttal of Leith, Shorten and McCullagh's evaluation, 2007;
* D — :mod:`.lee_chuvpilo_2002`: Lee and Chuvpilo, "A simulation based comparison between HighSpeed TCP and XCP", 2002;
* E — :mod:`.lin_2024`: Lin, "Cubic vs BBR in the cloud", 2024;
* F — :mod:`.modern`: the arguments of today: Copa (Arun and Balakrishnan, NSDI 2018), LEDBAT
  (RFC 6817), and TCP Prague through the DualQ Coupled AQM (RFC 9332), each against CUBIC.
"""

from __future__ import annotations

from .lee_chuvpilo_2002 import D_SERIES
from .leith_2007 import B_SERIES
from .lin_2024 import E_SERIES
from .modern import F_SERIES
from .rhee_2007 import C_SERIES
from .rhee_xu_2005 import A_SERIES

__all__ = ["PRESETS"]

PRESETS = [*A_SERIES, *B_SERIES, *C_SERIES, *D_SERIES, *E_SERIES, *F_SERIES]
