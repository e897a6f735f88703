"""Batch questions, Qt-free: one question asked of each of many document folders, every row a
saved session, under one total budget, resumable.

Start here: `questions.read_questions` parses the questions file (CSV or JSONL),
`opening.create_batch` / `opening.reopen_batch` record or reopen a batch, `runner.Batch` runs
its rows, `records.BatchRecords` reads what a batch did, `results.write_results` writes
`results.csv` and `results.json`.
"""
