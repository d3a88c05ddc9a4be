"""What an agent did: records, the `Trajectory`, its extraction from a span tree, a run's inputs and output.

Everything here reads spans only through `conventions`; the layers above read trajectories, never spans.
"""
