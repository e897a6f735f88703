"""Model providers: which provider serves a model, where its key is kept, which models it offers,
and what a server that cannot be reached reads as."""
