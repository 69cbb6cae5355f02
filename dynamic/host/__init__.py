"""The benchmark side of the host protocol: modules run inside the benchmark's own interpreter.

`host.py` is started as a script there (`dynamic/protocol.py`, or forked from `zygote.py` by
`dynamic/forkserver.py`); it loads its siblings by file path (`jsondiff.py`, `proctree.py`,
`adapter_<name>.py`) and evaluates `guard_watch.py` on request. toollint is never importable in that
interpreter, so every module here imports only the standard library and this folder
(`tests/test_architecture.py`). toollint's own side imports `jsondiff` and `proctree` from here too:
one implementation, both sides.
"""
