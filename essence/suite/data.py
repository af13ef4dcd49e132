"""A suite: several benchmarks on the models they share, items kept apart by member; :meth:`Suite.pooled` is one
:class:`~essence.data.Responses` of all items (ids ``member/item``) with the suite mean (pp) as target."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..data import METABENCH, POOL_CAVEAT, Responses, load
from ..data.errors import InputError

__all__ = ["Suite", "make_suite", "load_suite", "shared_models", "SEP"]

#: separator between a member's name and an item id in the pooled view
SEP = "/"


@dataclass(frozen=True, eq=False)
class Suite:
    """``members``: Responses with the same ``models`` in the same order; ``dropped``: member name -> number of its
    models other members lack; ``outside``: empty, or per member a Responses of those dropped models (None where
    none), never used by a compression (:meth:`outside_of`)."""

    members: tuple
    dropped: dict = field(default_factory=dict)
    outside: tuple = ()

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.members]

    @property
    def models(self) -> np.ndarray:
        return self.members[0].models

    @property
    def n_models(self) -> int:
        return self.members[0].n_models

    @property
    def n_items(self) -> list[int]:
        """Items per member, in member order."""
        return [m.n_items for m in self.members]

    @property
    def blocks(self) -> list[np.ndarray]:
        """Positions of each member's items in the pooled view: a list of ``(n_items_b,)`` int arrays."""
        edges = np.cumsum([0] + self.n_items)
        return [np.arange(a, b) for a, b in zip(edges[:-1], edges[1:])]

    @property
    def member_of(self) -> np.ndarray:
        """``(sum n_items,)`` member index of each pooled item."""
        return np.concatenate([np.full(n, b) for b, n in enumerate(self.n_items)])

    @property
    def targets(self) -> np.ndarray:
        """``(n_models, n_members)`` full scores, pp."""
        return np.column_stack([m.target for m in self.members])

    @property
    def mean_target(self) -> np.ndarray:
        """``(n_models,)`` the suite mean: unweighted mean of the member scores, pp."""
        return self.targets.mean(axis=1)

    @property
    def caveat(self) -> str | None:
        pre = [n for n in self.names if n in METABENCH]
        return f"{', '.join(pre)}: {POOL_CAVEAT}" if pre else None

    def subset(self, models) -> "Suite":
        """The same suite on some models (indices, mask or ids, as :meth:`Responses.subset` takes)."""
        return Suite(tuple(m.subset(models=models) for m in self.members), dict(self.dropped), self.outside)

    def _outside(self, b: int) -> Responses | None:
        """:attr:`outside` of member ``b`` as stored, or None when it has no models there."""
        out = self.outside[b] if self.outside else None
        return out if out is not None and out.n_models else None

    def outside_of(self, b: int) -> Responses | None:
        """Member ``b``'s models outside the suite on exactly its current items, or None (none, or an item lacking)."""
        out, items = self._outside(b), self.members[b].items
        if out is None:
            return None
        have = set(out.items.tolist())
        if any(i not in have for i in items.tolist()):
            return None
        return out.subset(items=items.astype(str))

    def pooled(self) -> Responses:
        """All members' items side by side, ids ``member/item``, target the suite mean (pp)."""
        texts = None
        if all(m.texts is not None for m in self.members):
            texts = np.concatenate([np.asarray(m.texts, dtype=str) for m in self.members])
        return Responses(
            np.ascontiguousarray(np.hstack([m.responses for m in self.members])), self.models,
            np.concatenate([np.char.add(f"{m.name}{SEP}", m.items.astype(str)) for m in self.members]),
            self.mean_target, texts=texts, name="+".join(self.names), target_source="suite_mean")

    def fingerprint(self) -> str:
        return "+".join(m.fingerprint() for m in self.members)

    def __repr__(self) -> str:
        parts = ", ".join(f"{m.name}: {m.n_items} items" for m in self.members)
        return f"Suite({self.n_models} models; {parts})"


def make_suite(members, names=None) -> Suite:
    """A :class:`Suite` of the models all Responses share (``names`` overrides theirs)."""
    members = list(members)
    if len(members) < 2:
        raise InputError(f"a suite needs at least two benchmarks, got {len(members)}; "
                         "compress a single benchmark with `essence compress DATA`")
    if any(not isinstance(m, Responses) for m in members):
        raise InputError("suite members must be Responses (see essence.data.load)")
    if names is not None:
        if len(names) != len(members):
            raise InputError(f"names: {len(names)} names for {len(members)} members")
        members = [Responses(m.responses, m.models, m.items, m.target, m.texts, str(n), m.item_extras,
                             m.model_extras, m.target_source) for m, n in zip(members, names)]
    seen = [m.name for m in members]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise InputError(f"suite members must have distinct names, {dup[0]!r} is repeated; "
                         "rename the files (the name is the file stem) or pass names=")
    order = shared_models(members)
    if len(order) < 10:
        raise InputError(f"only {len(order)} model(s) have results on all of {', '.join(seen)}; a suite needs at "
                         "least 10 shared models (check that the files name models the same way)")
    dropped = {m.name: int(m.n_models - len(order)) for m in members}
    outside = tuple(m.subset(models=~np.isin(m.models, order)) if dropped[m.name] else None for m in members)
    return Suite(tuple(m.subset(models=order) for m in members), dropped, outside)


def shared_models(members) -> list:
    """The model ids present in every member, in the first member's order."""
    common = set.intersection(*(set(m.models.tolist()) for m in members))
    return [s for s in members[0].models.tolist() if s in common]


def load_suite(sources, names=None, keep=None) -> Suite:
    """A suite of every source (:func:`essence.data.load`); ``keep``: one function per source, member -> items."""
    sources = list(sources)
    members = [s if isinstance(s, Responses) else load(s) for s in sources]
    if names is None:  # a file's stem, else the loaded data's name
        names = [m.name if isinstance(s, Responses) or not Path(str(s)).suffix else Path(str(s)).stem
                 for s, m in zip(sources, members)]
    if keep is not None:
        keep = list(keep)
        if len(keep) != len(members):
            raise InputError(f"keep: {len(keep)} item filters for {len(members)} members; give one per member")
        members = [m.subset(items=f(m)) for m, f in zip(members, keep)]
    return make_suite(members, names)
