"""Source code and configuration files (``index build --code``): a project's ``.py``, ``.ts``, ``.go``, ``.rs``,
``.java``, ``.sql``, ``.sh``, ``Makefile``, ``Dockerfile``, ``.yaml``, ``.toml`` ... read as the text they are, each
definition a heading, so that a question about a repository ("where is the retry timeout set?", "what does
load_index check?") finds the function or block that holds the answer, cited as "store.py: def load_index(path)".

A file is a document titled by its name; its headings (where long files are cut into pieces, `local_rag.corpus.pieces`,
and what a passage's section names) are the lines that open a definition: Python's top-level functions and classes and
their methods, found by `ast` (a file that does not parse, Python 2, falls back to the lines below); in the other
languages the lines, at most one level in, that open a function, method, class, struct, interface, trait, impl,
module or type, a C or Java signature, a shell function, an SQL ``CREATE``, a Makefile target, a Dockerfile's
``FROM``, a TOML or INI ``[section]``, a YAML top-level key, a style sheet's top-level rule (by its selector) and a
manifest's block (``"dependencies"`` of a ``package.json``, ``<dependencies>`` of a ``pom.xml``; a manifest is known by
its name, since most ``.json`` and ``.xml`` files are data). The heading is the line itself up to its ``{`` or
``:`` (``func (s *Server) Handle(w http.ResponseWriter, r *http.Request)``), as a developer would name it. Lines
rather than a parser for each language (tree-sitter's grammars are a compiled package per language): a heading only
tells where to cut and what to call a piece, and a line missed costs a less precise name, never text.

Code is read only when the index asks for it (``--code``; a source file given alone is always read): a folder of
documents often holds scripts, and a saved web site the pages' JavaScript, which would crowd the passages a question
about the documents should find. A minified file (lines of more than 110 characters on average, as GitHub's linguist
tells them) is listed with that reason, not read.

Example:
    >>> python = "import os\\n\\nclass Store:\\n    def load(self, path):\\n        pass\\n"
    >>> [h for _, h in definitions(python, "python")]
    ['class Store', 'def Store.load(self, path)']
    >>> [h for _, h in definitions("package main\\n\\nfunc (s *Server) Handle(w Writer) {\\n}\\n", "go")]
    ['func (s *Server) Handle(w Writer)']
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from local_rag.corpus.sections import Document, Section, UnreadableFile, decode_text

__all__ = ["CODE_KINDS", "code_kind", "definitions", "read_code"]

# suffix -> language (the family whose definition lines `definitions` knows)
_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".pyx": "keyword", ".pxd": "keyword", ".pxi": "keyword",  # Cython: ast cannot parse it
    ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "js", ".ts": "js", ".tsx": "js", ".mts": "js", ".cts": "js",
    ".vue": "js", ".svelte": "js",
    ".go": "go", ".rs": "rust",
    ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".cxx": "c", ".hpp": "c", ".hh": "c", ".hxx": "c", ".cu": "c",
    ".java": "c", ".cs": "csharp", ".m": "c", ".mm": "c",
    ".kt": "swift", ".kts": "swift", ".scala": "swift", ".swift": "swift", ".dart": "c", ".groovy": "c",
    ".gradle": "c", ".rb": "keyword", ".php": "keyword", ".lua": "keyword", ".pl": "keyword", ".pm": "keyword",
    ".jl": "keyword", ".ex": "keyword", ".exs": "keyword", ".r": "r",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "shell", ".bat": "plain",
    ".cmd": "plain",
    ".sql": "sql",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "ini", ".ini": "ini", ".cfg": "ini", ".conf": "ini",
    ".properties": "plain", ".tf": "hcl", ".hcl": "hcl", ".proto": "schema", ".graphql": "schema", ".gql": "schema",
    ".cmake": "plain", ".mk": "make", ".dockerfile": "docker",
    ".css": "css", ".scss": "css", ".less": "css", ".sass": "css",
    ".csproj": "xml", ".vbproj": "xml", ".fsproj": "xml",  # .NET projects: their packages and build settings
    ".bzl": "python", ".bazel": "python",  # Starlark (Bazel): Python's syntax
    ".diff": "diff", ".patch": "diff",  # a change: a file's part a heading ("diff --git a/x b/x"), a mailed patch's subject
    # a project's manifest, known by its name (their suffix alone says nothing: most .json and .xml files are data)
    "package.json": "json", "composer.json": "json", "tsconfig.json": "json", "jsconfig.json": "json",
    "deno.json": "json", "pom.xml": "xml", "build.xml": "xml", "androidmanifest.xml": "xml",
}
# files known by their name (no suffix, or a suffix that says nothing)
_NAMES = {"makefile": ".mk", "gnumakefile": ".mk", "dockerfile": ".dockerfile", "containerfile": ".dockerfile",
          "jenkinsfile": ".groovy", "vagrantfile": ".rb", "rakefile": ".rb", "gemfile": ".rb"}
CODE_KINDS = tuple(_LANGUAGES)  # what `code_kind` returns: the suffixes ``--code`` reads, and the manifests' names

_MINIFIED_LINE = 110  # average characters a line above which a file is minified (GitHub linguist's rule)

# words that may come before a definition's keyword (JavaScript/TypeScript, Rust, Java, Kotlin, C#, Swift, Scala, PHP,
# Lua): "pub(crate) async fn", "private(set) var", "companion object", "case class", "@MainActor final class"
_MODIFIERS = (r"(?:(?:export|default|async|pub(?:\([\w:]+\))?|public|private|protected|internal|static|abstract|final|"
              r"sealed|open|data|override|suspend|unsafe|extern|inline|virtual|local|partial|readonly|declare|"
              r"const|fileprivate|mutating|nonmutating|cdef|cpdef|companion|inner|operator|infix|tailrec|annotation|"
              r"value|expect|actual|case|implicit|lazy|convenience|required|nonisolated|indirect|"
              r"(?:private|fileprivate|internal|public)\(set\)|@\w+(?:\([^)]*\))?)\s+)*")
_KEYWORDS = (r"def|defp|defmodule|defmacro|class|function\*?|func|fn|fun|struct|enum|union|trait|impl|interface|"
             r"module|namespace|object|record|protocol|extension|macro_rules!|macro|sub|mod|type")
_KEYWORD_LINE = re.compile(rf"^[ \t]{{0,4}}{_MODIFIERS}(?:(?:{_KEYWORDS})\s+[\w$(&*\[]|impl<)")
# Kotlin, Swift, Scala: a nested type's members two levels in ("class Outer { class Inner { fun f() } }", a Swift
# extension's struct), generic functions ("fun <T> listOf(", "def map[B]("), initialisers, and a computed property
# with a body (SwiftUI's "var body: some View {"), Kotlin's "companion object {"
_NESTED_KEYWORD = re.compile(rf"^[ \t]{{0,8}}{_MODIFIERS}(?:(?:{_KEYWORDS})\s+[\w$(&*\[<`]|impl<)")
_MEMBER = re.compile(rf"^[ \t]{{0,8}}{_MODIFIERS}(?:(?:class\s+)?(?:init|deinit|subscript)\b[?!]?\s*[(<{{]"
                     rf"|constructor\s*\(|object\s*\{{\s*$|(?:var|val)\s+[\w`]+\s*:\s*[^={{]+\{{\s*$)")
# Protocol Buffers and GraphQL schemas
_SCHEMA = re.compile(r"^[ \t]{0,4}(?:message|service|enum|rpc|type|input|interface|schema|query|mutation|extend|union|"
                     r"scalar|oneof)\s+\w")
# JavaScript's functions as values: const load = async (path) => ..., const load = function (...)
_JS_VALUE = re.compile(r"^(?:[ \t]{0,4}(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]+)?|[\w$]+(?:\.[\w$]+)+\s*)"
                       r"=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)")
# a JavaScript or TypeScript class's methods and arrow-function fields, one level in: "async load(path) {",
# "static from (opts) {", "handleClick = () => {"; never a control statement or a call taking a callback's braces
_JS_METHOD = re.compile(
    r"^[ \t]{1,4}(?:(?:public|private|protected|static|async|get|set|readonly|override|abstract)\s+)*"
    r"(?!(?:if|for|while|switch|catch|return|function|else|do|with|await|new|typeof|delete|throw|super|this)\b)"
    r"(?:[#A-Za-z_$][\w$]*\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^=;{]+)?\{\s*$"
    r"|[#A-Za-z_$][\w$]*\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)\s*(?::[^=]+)?=>)")
# a C, C++, Java, C# or Dart signature: a type, a name, its parameters, no ';' (a call or a declaration ends with one)
_SIGNATURE = re.compile(r"^[ \t]{0,4}(?!(?:if|for|while|switch|return|else|catch|do|case|new|throw|sizeof|delete|"
                        r"goto|using|typedef)\b)[A-Za-z_][\w:<>,*&\[\]\s]*?[\s*&>]+[A-Za-z_~][\w:~]*\s*"
                        r"\([^;]*$")
# C's GNU style: the return type on the line above, the name at the start of its own line
# C#: a namespace's block puts its classes one level in and their methods two (a file-scoped namespace does not)
_CSHARP = tuple(re.compile(p.pattern.replace("[ \\t]{0,4}", "[ \\t]{0,8}", 1)) for p in (_KEYWORD_LINE, _SIGNATURE))
# C#'s expression-bodied members: "public override string ToString() => $"{Id}";", "public int Count => _items.Count;"
_ARROW_MEMBER = re.compile(r"^[ \t]{0,8}(?!(?:return|var|if|else|case|yield|await)\b)[A-Za-z_][\w<>,\[\]?\s]*?"
                           r"[\s>?\]]+[A-Za-z_][\w]*\s*(?:<[^>]*>\s*)?(?:\([^;]*?\)\s*)?=>")
_NAME_FIRST = re.compile(r"^(?!(?:if|for|while|switch|return)\b)[A-Za-z_][\w:~]*\s*\([^;]*$")
_SHELL = re.compile(r"^(?:function\s+[\w:-]+|[\w:-]+\s*\(\s*\))")
_SQL = re.compile(r"^\s*(?:CREATE|ALTER)\s+(?:OR\s+REPLACE\s+)?(?:\w+\s+){0,2}?(?:TABLE|VIEW|FUNCTION|PROCEDURE|"
                  r"INDEX|TRIGGER|TYPE|SCHEMA|SEQUENCE)\b", re.IGNORECASE)
_R = re.compile(r"^[\w.]+\s*(?:<-|=)\s*function\b")
_MAKE = re.compile(r"^(?!\.[A-Z])[\w./%$(){}-]+(?:[ \t]+[\w./%$(){}-]+)*[ \t]*::?(?![=:])")
_DOCKER = re.compile(r"^FROM\s", re.IGNORECASE)
_INI = re.compile(r"^\s*\[\[?[^\]\n]+\]\]?\s*(?:#.*)?$")
_YAML = re.compile(r"^[A-Za-z_\"'][\w.\"' -]*:(?:\s|$)")
_HCL = re.compile(r"^(?:resource|data|module|variable|output|provider|locals|terraform)\b")
_DIFF = re.compile(r"^(?:diff --git |Index: |Subject: )")
_CSS = re.compile(r"^(?:@(?:media|supports|keyframes|mixin|function|font-face|layer|container)\b[^;{]*|[^\s@};][^;{}]*)\{")
_JSON_KEY = re.compile(r'^(?: {2}| {4}|\t)"[^"]+"\s*:\s*[{\[]\s*$')  # a manifest's block: "scripts": {
_XML_BLOCK = re.compile(r"^[ \t]{0,4}<[A-Za-z][\w:.-]*(?:\s[^>]*)?>\s*$")  # an element opening a block: <dependencies>
_LINES = {
    "js": (_KEYWORD_LINE, _JS_VALUE, _JS_METHOD), "go": (_KEYWORD_LINE,), "rust": (_KEYWORD_LINE,),
    "c": (_KEYWORD_LINE, _SIGNATURE, _NAME_FIRST), "csharp": (*_CSHARP, _ARROW_MEMBER), "keyword": (_KEYWORD_LINE,),
    "swift": (_NESTED_KEYWORD, _MEMBER), "python": (_KEYWORD_LINE,), "r": (_R,),
    "shell": (_SHELL,), "sql": (_SQL,), "make": (_MAKE,), "docker": (_DOCKER,), "ini": (_INI,), "yaml": (_YAML,),
    "hcl": (_HCL,), "schema": (_SCHEMA,), "css": (_CSS,), "diff": (_DIFF,), "json": (_JSON_KEY,), "xml": (_XML_BLOCK,), "plain": (),
}
_LONGEST = 300  # a longer line opens no definition (and would cost the signature's pattern time to rule out)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)  # its lines open no definition (a licence's "(INCLUDING, ...")
_COMMENT = ("//", "#", "/*", "*", "--", ";", "%")


def code_kind(path: Path) -> str:
    """The suffix that ``path`` is read as when it is code or configuration, or "": its own suffix when one of
    `CODE_KINDS`; a ``Makefile``, ``Dockerfile`` (``Dockerfile.dev`` too) or ``Jenkinsfile`` by name (a
    ``CMakeLists.txt`` is read as the text file it is named).

    Example:
        >>> code_kind(Path("src/Store.PY")), code_kind(Path("Makefile")), code_kind(Path("Dockerfile.dev"))
        ('.py', '.mk', '.dockerfile')
        >>> code_kind(Path("package.json")), code_kind(Path("data.json")), code_kind(Path("notes.txt"))
        ('package.json', '', '')
    """
    name = path.name.lower()
    if name in _NAMES:
        return _NAMES[name]
    if name in _LANGUAGES:  # a manifest: package.json, pom.xml
        return name
    if name.startswith(("dockerfile.", "containerfile.")):
        return ".dockerfile"
    if name.startswith("tsconfig.") and name.endswith(".json"):  # tsconfig.build.json
        return "tsconfig.json"
    suffix = path.suffix.lower()
    return suffix if suffix in _LANGUAGES else ""


def read_code(path: Path) -> Document:
    """A source or configuration file: titled by its name, a heading at each definition (`definitions`).

    Raises:
        UnreadableFile: a minified file (lines of more than 110 characters on average), or not text.
    """
    text, encoding = decode_text(path.read_bytes())
    if "\x00" in text:
        raise UnreadableFile("binary data under a source file's name: not read")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the line breaks ast counts
    lead = len(text) - len(text.lstrip("\n"))  # blank lines before the first: the passages' line numbers count them
    text = text.strip("\n")
    lines = text.count("\n") + 1
    if len(text) > 2000 and len(text) / lines > _MINIFIED_LINE:
        raise UnreadableFile(f"minified or generated code (lines of {len(text) // lines:,} characters on average): "
                             "not read")
    language = _LANGUAGES[code_kind(path)]
    return Document(path.name, [Section(text, headings=definitions(text, language))], encoding=encoding,
                    first_line=lead + 1)


def definitions(text: str, language: str) -> list[tuple[int, str]]:
    """(character offset, heading) of the definitions of ``text`` in ``language`` (one of ``_LANGUAGES``' values):
    Python's by `ast` (decorators included in what follows them), the others by their opening lines."""
    if language == "python":
        try:
            return _python_definitions(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # Python 2, a template, a file cut short: its lines, as other languages'
    patterns = _LINES[language]
    out: list[tuple[int, str]] = []
    offset = 0
    blanked = text
    if "/*" in text and language != "json":  # a JSON string holds globs ("lib/**/*.js") that would open a comment
        blanked = _BLOCK_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    lines = blanked.splitlines(keepends=True)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and len(line) <= _LONGEST and not stripped.startswith(_COMMENT) and any(
                p.match(line) for p in patterns):
            signature = _whole_signature(lines, i, language) if language in _SIGNED else stripped
            if signature is not None:
                out.append((offset, _named(signature, language)))
        offset += len(line)
    return out


_SIGNED = ("c", "csharp", "swift", "keyword", "js", "go", "rust")  # whose parameters may run over several lines
_SPACE = re.compile(r"\s+")


def _whole_signature(lines: list[str], i: int, language: str = "c") -> str | None:
    """The definition opened at ``lines[i]`` with its parameters: a list the line leaves open is closed by the next
    lines (at most 8), joined ("fun restart(\\n    pump: Pump,\\n): Boolean {" -> "fun restart(pump: Pump): Boolean
    {"); in C, C++, Java and C#, None when what it closes into ends with ``;`` (a declaration or a call spread over
    lines, not a definition; an expression-bodied member's ``=>`` is one).

    Example:
        >>> _whole_signature(["int open_valve(struct valve *v,\\n", "               int flags)\\n", "{\\n"], 0)
        'int open_valve(struct valve *v, int flags)'
        >>> _whole_signature(["void Reset(int a,\\n", "    int b);\\n"], 0) is None
        True
    """
    text = lines[i].strip()
    depth = text.count("(") - text.count(")")
    if depth <= 0:
        declared = (language in ("c", "csharp") and text.endswith(";") and not re.search(r"[{=]", text)
                    and not re.match(r"(?:\w+\s+)*record\b", text))  # C#'s "record Pump(int Id);" is one
        return None if declared else text  # "struct pump;", C#'s "object GetValue(string name);"
    for line in lines[i + 1:i + 9]:
        piece = re.sub(r"\s+//.*$", "", line.strip())
        text += " " + piece
        depth += piece.count("(") - piece.count(")")
        if depth <= 0:
            break
    else:
        return lines[i].strip()  # not closed within 8 lines: the line as it is
    text = _SPACE.sub(" ", text).replace("( ", "(").replace(" )", ")").replace(", )", ")").replace(",)", ")")
    declared = language in ("c", "csharp") and text.endswith(";") and not re.search(r"[{=]", text)
    return None if declared else text


def _heading(line: str) -> str:
    """A definition's line as its heading: without its ending ``{``, ``=>``, ``:``, ``=`` or ``;`` and a trailing
    comment, at most 100 characters.

    Example:
        >>> _heading("export async function load(path: string): Promise<Index> {")
        'export async function load(path: string): Promise<Index>'
        >>> _heading("[tool.ruff]"), _heading("build: deps ## make the wheel")
        ('[tool.ruff]', 'build: deps')
    """
    line = re.sub(r"\s+(?:#|//).*$", "", line)  # a trailing comment
    line = re.sub(r"\s*(?:\{\s*\}?|=>\s*[{(]?|[:=;])\s*$", "", line) or line
    return line[:100]


def _named(line: str, language: str) -> str:
    """A definition's line as its heading: a manifest's block by its key (``"scripts": {`` -> ``"scripts"``), a style
    rule by its selector (``.nav a:hover { color: red }`` -> ``.nav a:hover``), a C# expression-bodied member without
    its expression (``public int Count => _items.Count;`` -> ``public int Count``), the rest by `_heading`."""
    if language == "json":
        return line.split('":', 1)[0] + '"'
    if language == "css":
        return line.split("{", 1)[0].strip()[:100]
    if language == "csharp" and _ARROW_MEMBER.match(line):  # an expression-bodied member without its expression
        return _heading(line.split("=>", 1)[0].rstrip())
    return _heading(line)


def _python_definitions(text: str) -> list[tuple[int, str]]:
    """Python's top-level functions and classes and the methods of those classes: "def load_index(path, *, verify)",
    "class Store", "def Store.load(self, path)"."""
    tree = ast.parse(text)
    starts = [0]
    for line in text.split("\n"):  # ast counts lines at "\n" only: a form feed (^L) is white space to it
        starts.append(starts[-1] + len(line) + 1)
    out: list[tuple[int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out.append((starts[_first_line(node) - 1], f"class {node.name}"))
            out += [(starts[_first_line(item) - 1], _python_def(item, f"{node.name}.")) for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((starts[_first_line(node) - 1], _python_def(node)))
    return sorted(out)


def _first_line(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The line a definition begins on, its decorators included."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _python_def(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str = "") -> str:
    """"def Store.load(self, path)": a function's name and its parameters' names."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        names.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        names.append("*")
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append(f"**{args.kwarg.arg}")
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{prefix} {owner}{node.name}({', '.join(names)})"
