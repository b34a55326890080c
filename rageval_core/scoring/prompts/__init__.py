"""Prompt templates: data files with declared variables, checked placeholders and delimited untrusted text."""

from rageval_core.scoring.prompts.template import (
    DEFAULT_UNTRUSTED,
    TEMPLATES_DIR,
    PromptTemplate,
    TemplateError,
    TemplateRef,
    list_templates,
    load_template,
    parse_source,
    resolve_template,
)

__all__ = [
    "DEFAULT_UNTRUSTED",
    "TEMPLATES_DIR",
    "PromptTemplate",
    "TemplateError",
    "TemplateRef",
    "list_templates",
    "load_template",
    "parse_source",
    "resolve_template",
]
