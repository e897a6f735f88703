"""RLM Desktop: Recursive Language Models over local documents."""

__version__ = "0.1.0"
