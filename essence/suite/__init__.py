"""Suites: several benchmarks compressed as one (:class:`Suite`, :func:`select_suite`, :func:`compress_suite`)."""

from .artifact import SUITE_SCHEMA, SuiteCompressed, compress_suite
from .data import Suite, load_suite, make_suite
from .fitness import WEIGHTINGS, JointRidgeFitness
from .select import SUITE_METHODS, select_suite

__all__ = ["Suite", "load_suite", "make_suite", "JointRidgeFitness", "WEIGHTINGS", "select_suite",
           "SUITE_METHODS", "SuiteCompressed", "compress_suite", "SUITE_SCHEMA"]
