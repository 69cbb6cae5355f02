"""tau-bench's host side: `validation_host.py` (evaluated through the gateway) runs in tau-bench's own
interpreter; it imports only the standard library, tau-bench and its dependencies
(`tests/test_architecture.py`)."""
