"""The real-model suite (`make test-real`): the app against Gemma 3 270M on llama.cpp's server.

It asserts what the app does with whatever a real model writes, never whether the answer is right:
the GGUF is the base model, not the instruction-tuned one, and often echoes its prompt.
"""
