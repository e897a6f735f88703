"""Evaluation, Qt-free: tasks with known answers, their scorers, and a runner that measures
settings (model, sub-model, mode, depth, profile) on them through the real engine.

Start here: `tasks.generate(spec)` for a task set, `runner.Evaluation` to run it, `summary` for
the table per setting, `threshold.suggest` for `auto` mode's direct-call threshold.
"""
