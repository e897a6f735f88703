"""The evaluation page: pick tasks and settings (remembered for the next time), run them with a
progress bar per setting and the spend against the budget, plot score against cost, open any
run in the main view, and reopen past evaluations with their table and chart."""
