"""The contract's bodies, byte for byte as the Rust targets write them
(crates/servers/src/routes.rs): `{"ok":true,"model":"pool","steps":3,"elapsed_ms":12.300}`,
`{"ok":false,"error":"..."}`, and the fixed messages."""

import json

JSON = "application/json"
OCTET_STREAM = "application/octet-stream"
PROMETHEUS = "text/plain; version=0.0.4"

MISSING_STEPS = "missing query parameter 'steps', e.g. /work?steps=sleep:100"
VALUE_NEEDS_MC = ("body=value answers the value of the last mc step, but steps has none: "
                  "e.g. /work?steps=mc:test&body=value")


class WorkError(Exception):
    """A request answered with `status` and `{"ok":false,"error":message}`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def ok(model: str, steps: int, elapsed_s: float) -> bytes:
    return (f'{{"ok":true,"model":"{model}","steps":{steps},'
            f'"elapsed_ms":{elapsed_s * 1e3:.3f}}}').encode()


def error(message: str) -> bytes:
    # serde_json's escapes: the same as json.dumps without ASCII-escaping.
    return f'{{"ok":false,"error":{json.dumps(message, ensure_ascii=False)}}}'.encode()


def health(model: str) -> bytes:
    return f'{{"ok":true,"model":"{model}"}}'.encode()


def not_found(path: str) -> bytes:
    return error(f"no such path '{path}' (the contract has /work?steps=..., /health, /metrics)")


def method_not_allowed(method: str) -> bytes:
    return error(f"method {method} not allowed (use GET)")


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}
