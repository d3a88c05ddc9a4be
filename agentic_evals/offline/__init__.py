"""Scoring datasets over loaded traces: which trace is which case, the evaluator context, dataset files."""
