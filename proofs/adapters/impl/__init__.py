"""ackguard's own implementation (`impl/`) as the engines drive it.

`adapter` is the conformance adapter over `impl.FakeServer`; `demo` runs every
variant over a real loopback websocket with randomized overlapping pushes (the
engine of `ackguard demo` and of the soak benchmark).
"""

from proofs.adapters.impl.adapter import IMPLEMENTED_SHAPES, ImplAdapter, impl_adapter, make_item

__all__ = ["IMPLEMENTED_SHAPES", "ImplAdapter", "impl_adapter", "make_item"]
