"""Tool documents: what the retriever embeds for each API of the catalog.

One template turns an API into text (its app, domain, name, description and
arguments); the document is keyed by API id and carries a hash of its text, so a
rebuild of the index re-embeds only the documents whose text changed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from toolbed.apis import Api, App, Catalog

__all__ = ["TEMPLATE", "ToolDocument", "tool_document", "tool_documents"]

TEMPLATE = "{app_name} ({domain}): {title}. {description} Arguments: {arguments}."
"""Fields: app, app_name, domain, tier, effect, name, title (the name in words),
description, arguments (``name: description`` pairs)."""


@dataclass(frozen=True)
class ToolDocument:
    """One API as the retriever sees it."""

    id: str
    text: str
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]


def tool_document(api: Api, app: App, template: str = TEMPLATE) -> ToolDocument:
    arguments = "; ".join(
        f"{name}: {' '.join(str(arg.schema_.get('description', '')).split())}"
        for name, arg in api.args.items()
    ) or "none"
    text = template.format(
        app=app.app, app_name=app.name, domain=app.domain, tier=app.tier, effect=api.effect,
        name=api.name, title=api.name.replace("_", " "), description=" ".join(
            api.description.split()), arguments=arguments,
    )
    metadata = {"app": app.app, "domain": app.domain, "tier": app.tier, "effect": api.effect}
    return ToolDocument(api.id, text, metadata)


def tool_documents(
    catalog: Catalog, tier: str | None = None, template: str = TEMPLATE
) -> list[ToolDocument]:
    """A document for every API of the catalog (or of one tier), in catalog order."""
    return [tool_document(api, catalog.app_of(api), template) for api in catalog
            if tier is None or catalog.app_of(api).tier == tier]
