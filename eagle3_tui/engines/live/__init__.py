"""The serving engine the user runs, run for real: what it feeds the drafter and the acceptance it
measures (engines/live/run.py starts it in the engine's own Python; vllm_engine.py is the program
it runs there)."""
