"""Model providers: which provider serves a model, where its key is kept, which models it offers."""
