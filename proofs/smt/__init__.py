"""z3 verification of the model: encoding, bounded model checking and proofs.

- `symbolic`: symbolic ordered lists (membership plus a precedence relation);
- `encoding`: the model's transition relation as z3 formulas, generated from the
  site, variant, environment and scenario data of a `model.Config`;
- `bmc`: shortest counterexamples by iterative deepening on one incremental solver
  per (variant, scenario), and proofs by the forward criterion of k-induction;
- `induction`: inductive invariant checks with per-(conjunct, move) diagnostics,
  and Spacer (z3's CHC engine) whose invariant is re-checked that way;
- `verify`: the catalog runner behind `ackguard verify`.

`docs/proofs.md` describes the encoding and every abstraction in it.
"""
