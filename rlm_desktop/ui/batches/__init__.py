"""The Batches view: the batches `rlm-desktop batch --questions FILE` stored, each with its rows
(status, answer, cost, findings, where each ran), and each row's run opened in the window."""
