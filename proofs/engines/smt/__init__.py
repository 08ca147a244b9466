"""z3 verification of the model: encoding, bounded model checking and proofs.

- `symbolic`: folding connectives, item references, symbolic ordered lists
  (membership plus a precedence relation);
- `schema`: the encoding's state variables, each family declared once, with typed
  accessors;
- `encoding`: the model's transition relation as z3 formulas, generated from the
  site, variant, environment and scenario data of a `model.Config`;
- `simulation`: the abstraction function from model states to the encoding's
  variables, and the step-by-step agreement check on reachable states;
- `bmc`: shortest counterexamples by iterative deepening on one incremental
  solver per (variant, scenario), replayed through the model, and proofs by the
  forward criterion of k-induction;
- `induction`: inductive invariants checked by z3, with the (conjunct, move)
  that breaks one;
- `reachset`: the explorer's reachable states as a candidate inductive invariant;
- `verify`: the catalog runner behind `ackguard verify`.

`docs/proofs.md` describes the encoding and every abstraction in it.
"""

from proofs.engines.smt.bmc import (
    COUNTEREXAMPLE,
    METHODS,
    PROVED,
    UNKNOWN,
    CellResult,
    check_configs,
)
from proofs.engines.smt.encoding import Encoding
from proofs.engines.smt.verify import (
    DEFAULT_JOBS,
    DEFAULT_TIMEOUT,
    Cell,
    ScenarioVerdict,
    run,
)

__all__ = [
    "COUNTEREXAMPLE",
    "DEFAULT_JOBS",
    "DEFAULT_TIMEOUT",
    "METHODS",
    "PROVED",
    "UNKNOWN",
    "Cell",
    "CellResult",
    "Encoding",
    "ScenarioVerdict",
    "check_configs",
    "run",
]
