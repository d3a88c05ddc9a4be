"""The result model of a scoring run: the versioned JSON document, its verdicts (gates, case pass or
fail, tallies), the streamed builder, the comparison of two runs, the evaluation events.

The views that format it live in `views/`.
"""
