"""The deterministic mode router: signals, weights, exemplars, decisions, explicit feedback."""
