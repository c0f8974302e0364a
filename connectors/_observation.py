"""What an agent sees after a call: status, a few headers and the parsed body.

Bodies are parsed by content type: JSON as JSON; a WebDAV ``207 Multi-Status`` as a
list of ``{"href", "status", "props"}``; anything else as text. A body larger than
the cap is cut and flagged, so one huge listing cannot flood an agent's context.
"""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree

import httpx
from pydantic import BaseModel, ConfigDict

from ._redact import Redactor

__all__ = ["CallError", "KEPT_HEADERS", "Observation", "observe_response"]

KEPT_HEADERS = ("content-type", "etag", "last-modified", "location", "retry-after")
"""Response headers kept in an observation (an ETag is what an update or undo needs)."""


class CallError(BaseModel):
    """Why a call got no HTTP answer (bad arguments, unreachable app, ...)."""

    model_config = ConfigDict(frozen=True)

    type: str
    """The toolbed error class, e.g. ``ArgumentError``."""
    message: str
    details: list[dict[str, str]] = []


class Observation(BaseModel):
    """The result of one call, as the agent, the journal and the scorer see it."""

    model_config = ConfigDict(frozen=True)

    api: str
    """The API id, e.g. ``kinto.create_record``."""
    status: int | None = None
    """HTTP status; None when no request was answered (see ``error``)."""
    headers: dict[str, str] = {}
    body: Any = None
    truncated: bool = False
    """True when ``body`` was cut to the size cap (it is then the cut JSON text)."""
    error: CallError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    def bindable(self) -> dict[str, Any]:
        """The view JMESPath bindings read: ``{"status", "headers", "body"}``."""
        return {"status": self.status, "headers": self.headers, "body": self.body}


def observe_response(
    api_id: str, response: httpx.Response, *, cap: int, redactor: Redactor
) -> Observation:
    headers = {k: response.headers[k] for k in KEPT_HEADERS if k in response.headers}
    body = redactor.data(_parse(response))
    truncated = False
    size = len(body) if isinstance(body, str) else len(json.dumps(body, ensure_ascii=False))
    if size > cap:
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        body, truncated = text[:cap], True
    return Observation(
        api=api_id,
        status=response.status_code,
        headers=redactor.data(headers),
        body=body,
        truncated=truncated,
    )


def _parse(response: httpx.Response) -> Any:
    if not response.content:
        return None
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        try:
            return response.json()
        except ValueError:
            return response.text
    if response.status_code == 207 or media in ("application/xml", "text/xml"):
        try:
            return _multistatus(ElementTree.fromstring(response.content))
        except ElementTree.ParseError:
            return response.text
    return response.text


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _element(el: ElementTree.Element) -> Any:
    children = list(el)
    if not children:
        return (el.text or "").strip()
    out: dict[str, Any] = {}
    for child in children:
        key, value = _local(child.tag), _element(child)
        if key in out:
            out[key] = [*out[key], value] if isinstance(out[key], list) else [out[key], value]
        else:
            out[key] = value
    return out


def _multistatus(root: ElementTree.Element) -> Any:
    if _local(root.tag) != "multistatus":
        return _element(root)
    results = []
    for resp in root:
        if _local(resp.tag) != "response":
            continue
        entry: dict[str, Any] = {"href": "", "status": "", "props": {}}
        missing: list[str] = []
        for part in resp:
            name = _local(part.tag)
            if name == "href":
                entry["href"] = (part.text or "").strip()
            elif name == "status":
                entry["status"] = _status_code(part.text)
            elif name == "propstat":
                code = _status_code(next((s.text for s in part if _local(s.tag) == "status"), ""))
                for prop in (p for p in part if _local(p.tag) == "prop"):
                    for item in prop:
                        if 200 <= code < 300:
                            entry["props"][_local(item.tag)] = _element(item)
                        else:
                            missing.append(_local(item.tag))
                if 200 <= code < 300 or not entry["status"]:
                    entry["status"] = code
        if missing:
            entry["missing"] = missing
        results.append(entry)
    return results


def _status_code(line: str | None) -> int:
    # "HTTP/1.1 200 OK" -> 200
    parts = (line or "").split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
