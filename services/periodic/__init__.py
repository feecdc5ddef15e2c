"""Periodic services: the scheduler role enqueues them on their schedule, workers run them."""
