"""Suites: several benchmarks compressed as one.

``data``: :class:`Suite` (models present in every member, items kept apart by benchmark) and
:func:`load_suite`; ``fitness``: :class:`JointRidgeFitness`, the GA fitness that scores every member at
once; ``select``: :func:`select_suite` (joint EssenceBench, or any registered method on the pooled items);
``artifact``: :func:`compress_suite` and :class:`SuiteCompressed` (one JSON file); ``study``: suite
against separate artifacts on the same held-out models (benchmarks/suite.py, notebook 11).
"""

from .artifact import SUITE_SCHEMA, SuiteCompressed, compress_suite
from .data import Suite, load_suite, make_suite
from .fitness import WEIGHTINGS, JointRidgeFitness
from .select import SUITE_METHODS, select_suite

__all__ = ["Suite", "load_suite", "make_suite", "JointRidgeFitness", "WEIGHTINGS", "select_suite",
           "SUITE_METHODS", "SuiteCompressed", "compress_suite", "SUITE_SCHEMA"]
