"""AgentDojo's host side: `adapter.py` (loaded by path by `dynamic/host/host.py`, and evaluated through
the gateway for ground truth, grading and state schemas) runs in AgentDojo's own venv; it imports only
the standard library and agentdojo (`tests/test_architecture.py`)."""
