"""toolbed's benchmarks: each against a baseline measured in the same run.

    python -m benchmarks [--only replay rollback ...] [--quick] [--json]

prints one table of ratios; the README's performance table comes from it. Each module
also runs alone with more detail (``python benchmarks/retriever.py --sizes ...``).
"""
