"""Which tree-sitter grammar reads each source file, and what a definition is in it (domain data; pure).

The compiled grammars ship inside their wheels (``tree_sitter_<lang>/_binding.abi3.so``): loading one is
an import, never a download (docs/indexing.md, "Source code", says what was checked).

Per language: the node types that are definitions (each becomes a chunk, ``symbol_kind`` = that type),
those among them whose body holds member definitions of their own (a class's methods, an impl's
functions: each member its own chunk, ``Class.method``), the wrappers that stand for the definition they
wrap (a decorator list, ``export``, ``template<...>``: the chunk takes the wrapper's lines and the wrapped
node's kind and name), the nodes looked through as if their children stood at their level (a C header's
include guard, ``extern "C" { }``, a parse error), and the comments (and attributes) that belong to the
definition right below them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

import tree_sitter
import tree_sitter_bash
import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript

__all__ = ["Grammar", "grammar_for", "language"]


@dataclass(frozen=True)
class Grammar:
    """One language's reading of definitions (see the module docstring)."""

    name: str
    load: Callable[[], object]
    # Node types that are a chunk of their own.
    definitions: frozenset[str]
    # Definitions whose ``body`` field holds member definitions (split out as ``Outer.member``).
    containers: frozenset[str]
    # Wrapper node type -> field of the wrapped definition ("" : its last named child that is one).
    wrappers: tuple[tuple[str, str], ...] = ()
    # Node types whose children are read as if they stood at the wrapper's level.
    transparent: frozenset[str] = frozenset({"ERROR"})
    # Node types that belong to the definition below them when they touch it (doc comments, attributes).
    leading: frozenset[str] = frozenset({"comment"})
    # Definitions that count only with a body (``struct s;`` declares, ``struct s { }`` defines).
    need_body: frozenset[str] = frozenset()
    # Declarations that count only when they bind a function or a class (``const f = () => ...``).
    bind_functions: frozenset[str] = frozenset()


_C_FAMILY_TRANSPARENT = frozenset(
    {
        "ERROR",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "linkage_specification",
        "declaration_list",
    }
)
_C_TYPES = frozenset({"struct_specifier", "union_specifier", "enum_specifier"})

PYTHON = Grammar(
    "python",
    tree_sitter_python.language,
    definitions=frozenset({"function_definition", "class_definition"}),
    containers=frozenset({"class_definition"}),
    wrappers=(("decorated_definition", "definition"),),
)

_JS_DEFINITIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "method_definition",
        "lexical_declaration",
        "variable_declaration",
    }
)
JAVASCRIPT = Grammar(
    "javascript",
    tree_sitter_javascript.language,
    definitions=_JS_DEFINITIONS,
    containers=frozenset({"class_declaration"}),
    wrappers=(("export_statement", "declaration"),),
    bind_functions=frozenset({"lexical_declaration", "variable_declaration"}),
)
_TS_DEFINITIONS = _JS_DEFINITIONS | {
    "abstract_class_declaration",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
}
TYPESCRIPT = Grammar(
    "typescript",
    tree_sitter_typescript.language_typescript,
    definitions=_TS_DEFINITIONS,
    containers=frozenset({"class_declaration", "abstract_class_declaration"}),
    wrappers=(("export_statement", "declaration"),),
    bind_functions=frozenset({"lexical_declaration", "variable_declaration"}),
)
TSX = Grammar(
    "tsx",
    tree_sitter_typescript.language_tsx,
    definitions=TYPESCRIPT.definitions,
    containers=TYPESCRIPT.containers,
    wrappers=TYPESCRIPT.wrappers,
    bind_functions=TYPESCRIPT.bind_functions,
)
GO = Grammar(
    "go",
    tree_sitter_go.language,
    definitions=frozenset({"function_declaration", "method_declaration", "type_declaration"}),
    containers=frozenset(),
)
RUST = Grammar(
    "rust",
    tree_sitter_rust.language,
    definitions=frozenset(
        {"function_item", "impl_item", "struct_item", "enum_item", "trait_item", "mod_item"}
    ),
    containers=frozenset({"impl_item", "trait_item", "mod_item"}),
    leading=frozenset({"line_comment", "block_comment", "attribute_item"}),
)
JAVA = Grammar(
    "java",
    tree_sitter_java.language,
    definitions=frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
        }
    ),
    containers=frozenset(
        {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
    ),
    transparent=frozenset({"ERROR", "enum_body_declarations"}),
    leading=frozenset({"line_comment", "block_comment"}),
)
C = Grammar(
    "c",
    tree_sitter_c.language,
    definitions=frozenset({"function_definition", "type_definition", *_C_TYPES}),
    containers=frozenset(),
    transparent=_C_FAMILY_TRANSPARENT,
    need_body=frozenset({"type_definition", *_C_TYPES}),
)
CPP = Grammar(
    "cpp",
    tree_sitter_cpp.language,
    definitions=frozenset(
        {"function_definition", "type_definition", "class_specifier", "namespace_definition", *_C_TYPES}
    ),
    containers=frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
    wrappers=(("template_declaration", ""),),
    transparent=_C_FAMILY_TRANSPARENT,
    need_body=frozenset({"type_definition", "class_specifier", *_C_TYPES}),
)
BASH = Grammar(
    "bash",
    tree_sitter_bash.language,
    definitions=frozenset({"function_definition"}),
    containers=frozenset(),
)

# A ``.h`` file is read as C++: the C++ grammar reads C declarations as well (its grammar extends C's),
# while the C grammar turns a C++ header's classes, namespaces and templates into parse errors.
_BY_SUFFIX: dict[str, Grammar] = {
    ".py": PYTHON,
    ".pyi": PYTHON,
    ".js": JAVASCRIPT,
    ".mjs": JAVASCRIPT,
    ".cjs": JAVASCRIPT,
    ".jsx": JAVASCRIPT,
    ".ts": TYPESCRIPT,
    ".mts": TYPESCRIPT,
    ".cts": TYPESCRIPT,
    ".tsx": TSX,
    ".go": GO,
    ".rs": RUST,
    ".java": JAVA,
    ".c": C,
    ".h": CPP,
    ".cc": CPP,
    ".cpp": CPP,
    ".cxx": CPP,
    ".hh": CPP,
    ".hpp": CPP,
    ".hxx": CPP,
    ".sh": BASH,
    ".bash": BASH,
}


def grammar_for(path: str) -> Grammar | None:
    """The grammar of the source file at ``path`` (extension, case-insensitive); None if not code."""
    return _BY_SUFFIX.get(PurePosixPath(path).suffix.lower())


@functools.cache
def language(grammar: Grammar) -> tree_sitter.Language:
    """The compiled grammar, loaded once per process (a ``Language`` is immutable and shareable)."""
    return tree_sitter.Language(grammar.load())
