"""tau2's host side: `adapter.py` (loaded by path by `dynamic/host/host.py`) and `validation_host.py`
(evaluated through the gateway) run in tau2's own interpreter; they import only the standard library,
tau2 and its dependencies (`tests/test_architecture.py`)."""
