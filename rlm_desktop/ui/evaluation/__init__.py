"""The evaluation page: pick tasks and settings, run them with a progress bar per setting and
the spend against the budget, plot score against cost, and open any run in the main view."""
