"""Tool documents: what the retriever indexes for each API of the catalog.

One template turns an API into text: its app, domain, name and description, then the
requests a user would make for it (the catalog's ``queries``: document expansion, the
change that lifted retrieval most in the published ablations and here), then its
arguments, last because they matter least and are the first to be cut when a model
truncates the text. The document is keyed by API id and carries a hash of its text,
so a rebuild of the index re-embeds only the documents whose text changed, an edited
example request included.

Requests in Chinese get documents of their own (``lang="zh"``): the same template in
Chinese words around the catalog's ``queries_zh``, requests a Chinese user would make,
so that a Chinese request meets Chinese text (the description and the arguments stay
in English: a shared catalog, and the app names users type in Latin either way).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from toolbed.apis import Api, App, Catalog
from toolbed.errors import RetrieverError

__all__ = ["PLAIN_TEMPLATE", "TEMPLATE", "TEMPLATES", "ToolDocument", "text_hash",
           "tool_document", "tool_documents"]

TEMPLATE = ("{app_name} ({domain}): {title}. {description} For example: {queries} "
            "Arguments: {arguments}.")
"""Fields: app, app_name, domain, tier, effect, name, title (the name in words),
description, queries (the example requests, one after another), arguments
(``name: description`` pairs)."""

PLAIN_TEMPLATE = "{app_name} ({domain}): {title}. {description} Arguments: {arguments}."
"""The template without the example requests: the expansion stage switched off."""

TEMPLATES = {
    "en": (TEMPLATE, PLAIN_TEMPLATE),
    "zh": ("{app_name}（{domain}）：{title}。例如：{queries} {description} 参数：{arguments}。",
           "{app_name}（{domain}）：{title}。{description} 参数：{arguments}。"),
}
"""Each language's template, with example requests and without (the expansion stage
off). In Chinese the requests come first: they are the part of the document written in
the language of the query, and a model truncates from the end."""


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


def tool_document(api: Api, app: App, template: str | None = None, lang: str = "en"
                  ) -> ToolDocument:
    """``api``'s document in ``template`` (default: ``lang``'s with example requests);
    ``lang`` chooses which example requests it carries (``queries`` or ``queries_zh``)."""
    template = template or TEMPLATES[lang][0]
    examples = api.queries if lang == "en" else getattr(api, f"queries_{lang}")
    arguments = "; ".join(
        f"{name}: {_words(str(arg.schema_.get('description', '')))}"
        for name, arg in api.args.items()
    ) or "none"
    stop = "." if lang == "en" else "。"
    queries = " ".join(q if q.rstrip()[-1:] in ".?!。？！" else q + stop
                       for q in map(_words, examples))
    text = template.format(
        app=app.app, app_name=app.name, domain=app.domain, tier=app.tier, effect=api.effect,
        name=api.name, title=api.name.replace("_", " "), description=_words(api.description),
        queries=queries or "none" + stop, arguments=arguments,
    )
    metadata = {"app": app.app, "domain": app.domain, "tier": app.tier, "effect": api.effect}
    return ToolDocument(api.id, text, metadata, tuple(_words(q) for q in examples))


def tool_documents(
    catalog: Catalog, tier: str | None = None, template: str | None = None,
    lang: str = "en", expansion: bool = True,
) -> list[ToolDocument]:
    """A document for every API of the catalog (or of one tier), in catalog order, in
    ``lang``'s template with example requests (``expansion``) or without; ``template``
    replaces it."""
    if lang not in TEMPLATES:
        raise RetrieverError(f"no tool documents in language {lang!r}; the languages are "
                             f"{', '.join(TEMPLATES)}")
    chosen = template or TEMPLATES[lang][0 if expansion else 1]
    return [tool_document(api, catalog.app_of(api), chosen, lang) for api in catalog
            if tier is None or catalog.app_of(api).tier == tier]
