"""Tool documents: what the retriever indexes for each API of the catalog.

One template turns an API into text: its app, domain, name and description, then the
requests a user would make for it (the catalog's ``queries``: document expansion, the
change that lifted retrieval most in the published ablations and here), then its
arguments, last because they matter least and are the first to be cut when a model
truncates the text. The document is keyed by API id and carries a hash of its text,
so a rebuild of the index re-embeds only the documents whose text changed, an edited
example request included.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from toolbed.apis import Api, App, Catalog

__all__ = ["PLAIN_TEMPLATE", "TEMPLATE", "ToolDocument", "text_hash", "tool_document",
           "tool_documents"]

TEMPLATE = ("{app_name} ({domain}): {title}. {description} For example: {queries} "
            "Arguments: {arguments}.")
"""Fields: app, app_name, domain, tier, effect, name, title (the name in words),
description, queries (the example requests, one after another), arguments
(``name: description`` pairs)."""

PLAIN_TEMPLATE = "{app_name} ({domain}): {title}. {description} Arguments: {arguments}."
"""The template without the example requests: the expansion stage switched off."""


@dataclass(frozen=True)
class ToolDocument:
    """One API as the retriever sees it."""

    id: str
    text: str
    metadata: dict[str, str] = field(default_factory=dict)
    examples: tuple[str, ...] = ()
    """The API's example requests, one by one: the examples stage embeds each."""

    @property
    def hash(self) -> str:
        return text_hash(self.text)


def text_hash(text: str) -> str:
    """What the index keeps to tell an edited text (a document, an example request)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _words(text: str) -> str:
    return " ".join(text.split())


def tool_document(api: Api, app: App, template: str = TEMPLATE) -> ToolDocument:
    arguments = "; ".join(
        f"{name}: {_words(str(arg.schema_.get('description', '')))}"
        for name, arg in api.args.items()
    ) or "none"
    queries = " ".join(q if q.rstrip()[-1:] in ".?!" else f"{q}." for q in map(_words, api.queries))
    text = template.format(
        app=app.app, app_name=app.name, domain=app.domain, tier=app.tier, effect=api.effect,
        name=api.name, title=api.name.replace("_", " "), description=_words(api.description),
        queries=queries or "none.", arguments=arguments,
    )
    metadata = {"app": app.app, "domain": app.domain, "tier": app.tier, "effect": api.effect}
    return ToolDocument(api.id, text, metadata, tuple(_words(q) for q in api.queries))


def tool_documents(
    catalog: Catalog, tier: str | None = None, template: str = TEMPLATE
) -> list[ToolDocument]:
    """A document for every API of the catalog (or of one tier), in catalog order."""
    return [tool_document(api, catalog.app_of(api), template) for api in catalog
            if tier is None or catalog.app_of(api).tier == tier]
