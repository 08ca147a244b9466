"""Proofs for every number of calls and items: a first-order model of a cell (uninterpreted
sorts of tasks and items, relations generated from the model's records), Houdini over a
library of conjunct templates, and z3 checking the result with the sorts unbounded.

- `Cell`: a variant, the sites its calls may be of, an environment (and a mutant);
- `prove`: invariant 1 for the cell, as an `Outcome` with its scope and assumptions;
- `prove_covered`: invariant 1 for several cells from one certificate's check, where
  one cell's first-order system contains the others' (`contained`, `widest`);
- `covers`, `coverage`: whether the engine models a cell at all (an allow-list of
  environment options, session kinds and record fields), and why not;
- `run_to`: a run of the first-order system from an initial state to a broken clause;
- `structure`: a `model.State` as relations (the cross-check with the explorer);
- `state_lines`, `transition_lines`: first-order states in ackguard's trace words.
"""

from proofs.engines.fol.bmc import Run, run_to
from proofs.engines.fol.cover import contained, prove_covered, widest
from proofs.engines.fol.data import Sample, mixes, reachable, structure
from proofs.engines.fol.modelled import coverage, covers
from proofs.engines.fol.problem import ASSUMPTIONS, SAFETY, Problem, fixed_conjuncts
from proofs.engines.fol.proving import (
    FAILS,
    PROVED,
    UNKNOWN,
    Counterexample,
    Cti,
    Outcome,
    prove,
    scope,
)
from proofs.engines.fol.system import MUTANTS, Cell, FiniteSorts, unbounded_sorts
from proofs.engines.fol.templates import FAMILIES, candidates
from proofs.engines.fol.vocab import Atom, Clause, Literal, Relation, Structure
from proofs.engines.fol.words import state_lines, transition_lines

__all__ = [
    "ASSUMPTIONS",
    "FAILS",
    "FAMILIES",
    "MUTANTS",
    "PROVED",
    "SAFETY",
    "UNKNOWN",
    "Atom",
    "Cell",
    "Clause",
    "Counterexample",
    "Cti",
    "FiniteSorts",
    "Literal",
    "Outcome",
    "Problem",
    "Relation",
    "Run",
    "Sample",
    "Structure",
    "candidates",
    "contained",
    "coverage",
    "covers",
    "fixed_conjuncts",
    "mixes",
    "prove",
    "prove_covered",
    "reachable",
    "run_to",
    "scope",
    "state_lines",
    "structure",
    "transition_lines",
    "unbounded_sorts",
    "widest",
]
