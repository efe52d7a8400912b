"""Stage 3: serve a service model as a stateful mock with isolated worlds."""
