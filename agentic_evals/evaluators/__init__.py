"""Evaluators over the extracted trajectory, one module per concern; `registry` lists them all."""
