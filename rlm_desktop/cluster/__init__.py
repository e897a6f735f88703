"""Where trials run: in this process (the local executor) or as tasks on a Ray cluster.

Both give the evaluation and the batch runner the same thing, a run they can record and await
(`runs.TrialRun`); a remote run's events stream back and are written to the local store as they
arrive, so a trial that ran on a cluster node is reviewed like any other session.
"""
