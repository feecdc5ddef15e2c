"""The LLM: an OpenAI-compatible client per role, its output parsing, the local server, chat priority."""
