"""A local SGLang-compatible ``/v1/completions`` server (``grammarkit serve``; extra ``server``:
FastAPI and uvicorn): :mod:`.engine` turns checked requests into responses through a grammarkit
backend, :mod:`.app` is the HTTP layer, :mod:`.run` builds and runs it."""
