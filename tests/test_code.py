"""Source code and configuration files (``index build --code``, `local_rag.corpus.code`): real files (this
repository's own Python, Makefile, pyproject.toml and shell scripts, matplotlib's JavaScript and MarkupSafe's C, as
installed by the test extras), and code in other languages written as their formatters write it."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from local_rag.corpus.code import definitions
from local_rag.corpus.documents import UnreadableFile, document_suffix, read_document
from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import CorpusReport, read_corpus

ROOT = Path(__file__).resolve().parent.parent


def _installed(module: str, inside: str) -> Path:
    """A file an installed package ships (``inside``: its path in the package), or a skip."""
    found = pytest.importorskip(module)
    path = Path(found.__file__).parent / inside
    if not path.is_file():
        pytest.skip(f"{module} {getattr(found, '__version__', '')} ships no {inside}")
    return path


def _project(root: Path) -> Path:
    """A small project as a developer has it: README, Python sources, a Makefile, pyproject.toml, a shell script,
    JavaScript and C, all real files."""
    (root / "src").mkdir(parents=True)
    (root / "web").mkdir()
    for name in ("code.py", "pieces.py"):
        shutil.copy(ROOT / "local_rag" / "corpus" / name, root / "src" / name)
    for name in ("Makefile", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, root / name)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", root / "bootstrap.sh")
    shutil.copy(_installed("matplotlib", "backends/web_backend/js/mpl.js"), root / "web" / "mpl.js")
    shutil.copy(_installed("markupsafe", "_speedups.c"), root / "src" / "_speedups.c")
    return root


def test_a_repository_is_read_a_definition_a_heading(tmp_path: Path):
    """Session 58: pointed at a project, local-rag read its README and said "note: 7 file(s) of .py, .js ... skipped":
    the code, where most answers about a project are, was never read. With ``code``: each file a document titled by
    its name, each definition a heading (and a passage's section), the definition's own line as a developer names it."""
    folder = _project(tmp_path / "proj")
    (folder / "src" / "__init__.py").write_text("")  # a package's: nothing to read, nothing to list as unreadable
    report = CorpusReport()
    passages = list(read_corpus(folder, report=report, options=ReadOptions(code=True)))
    assert not report.unreadable and not report.skipped
    assert {p.doc_id for p in passages} == {"README.md", "Makefile", "pyproject.toml", "bootstrap.sh", "src/code.py",
                                            "src/pieces.py", "src/_speedups.c", "web/mpl.js"}
    sections = {(p.title, p.section) for p in passages}
    assert ("code.py", "def read_code(path)") in sections
    assert ("pyproject.toml", "[tool.ruff]") in {(p.title, h) for p in passages for _, h in p.headings} | sections

    headings = {name: [h for _, h in read_document(folder / name).sections[0].headings]
                for name in ("src/code.py", "Makefile", "bootstrap.sh", "web/mpl.js", "src/_speedups.c")}
    assert headings["src/code.py"][:3] == ["def code_kind(path)", "def read_code(path)", "def definitions(text, language)"]
    assert "test: bootstrap" in headings["Makefile"] and not any(h.startswith(".PHONY") for h in headings["Makefile"])
    assert [h.split(" {")[0] for h in headings["bootstrap.sh"]] == ["pip()"]  # a one-line function: the line
    assert "function on_mouse_event_closure(name)" in headings["web/mpl.js"]
    assert "mpl.figure.prototype._init_header = function ()" in headings["web/mpl.js"]
    assert "escape_unicode(PyObject *self, PyObject *s)" in headings["src/_speedups.c"]  # GNU style: name first
    assert not any("INCLUDING" in h for hs in headings.values() for h in hs)  # no line of a licence comment
    # the code is the text as written: indentation kept, nothing dropped
    text = "".join(s.text for s in read_document(folder / "src" / "code.py").sections)
    assert text == (ROOT / "local_rag" / "corpus" / "code.py").read_text().strip("\n")


def test_without_code_the_sources_are_named_with_the_option_that_reads_them(tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture):
    """A folder of documents often holds scripts (and a saved web site its JavaScript): they are read only when
    asked, and until then named with the option, not lumped with the files no reader handles."""
    folder = _project(tmp_path / "proj")
    (folder / "logo.key").write_bytes(b"\x00keynote")
    report = CorpusReport()
    with caplog.at_level(logging.WARNING, logger="local_rag"):
        passages = list(read_corpus(folder, report=report))
    assert {p.doc_id for p in passages} == {"README.md"}
    said = caplog.text
    assert re.search(r"7 source or configuration file\(s\) not read \(\.c, \.js, \.py, \.sh, \.toml, Makefile\): "
                     r"`--code` reads them", said), said
    assert "1 file(s) of .key skipped" in said
    assert sum("--code reads" in s for s in report.skipped) == 7


def test_a_source_file_given_alone_is_read(tmp_path: Path):
    """As a picture given alone is read without --images."""
    shutil.copy(ROOT / "local_rag" / "corpus" / "code.py", tmp_path / "code.py")
    passages = list(read_corpus(tmp_path / "code.py", report=CorpusReport()))
    assert passages and {p.title for p in passages} == {"code.py"}


@pytest.mark.parametrize(("language", "text", "expected"), [
    ("go", "package main\n\n// Server serves.\ntype Server struct {\n\taddr string\n}\n\n"
           "func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprintln(w, s.addr)\n}\n\n"
           "func main() {\n\tNewServer().Run()\n}\n",
     ["type Server struct", "func (s *Server) Handle(w http.ResponseWriter, r *http.Request)", "func main()"]),
    ("rust", "/// A pump.\npub struct Pump {\n    id: u32,\n}\n\nimpl Pump {\n    pub fn new(id: u32) -> Self {\n"
             "        Pump { id }\n    }\n}\n\nimpl<T: Display> fmt::Display for Wrapper<T> {\n}\n\n"
             "pub(crate) async fn restart(p: &mut Pump) -> Result<(), Error> {\n    Ok(())\n}\n",
     ["pub struct Pump", "impl Pump", "pub fn new(id: u32) -> Self", "impl<T: Display> fmt::Display for Wrapper<T>",
      "pub(crate) async fn restart(p: &mut Pump) -> Result<(), Error>"]),
    ("js", "import fs from 'fs';\n\nexport interface Options {\n  retries: number;\n}\n\n"
           "export type Mode = 'fast' | 'safe';\n\nexport async function load(path: string): Promise<Index> {\n"
           "  return query(path);\n}\n\nexport const retry = async (fn: () => void) => {\n  fn();\n};\n\n"
           "export default class Store extends Base {\n  constructor() {\n    super();\n  }\n}\n",
     ["export interface Options", "export type Mode = 'fast' | 'safe'",
      "export async function load(path: string): Promise<Index>", "export const retry = async (fn: () => void)",
      "export default class Store extends Base", "constructor()"]),
    ("js", "export class Store {\n  private cache = new Map<string, Index>();\n  constructor(private root: string) {\n"
           "    if (root) {\n      this.load(root);\n    }\n  }\n  async load(path: string): Promise<Index> {\n"
           "    return fetch(path).then((r) => {\n      return r;\n    });\n  }\n  get size(): number {\n    return 1;\n"
           "  }\n  handleClick = async (e: Event) => {\n  };\n}\ndescribe('store', () => {\n  beforeEach(() => {\n  });\n"
           "  it('loads', async () => {\n  });\n});\n",  # session 59: a class's methods; a test's callbacks are none
     ["export class Store", "constructor(private root: string)", "async load(path: string): Promise<Index>",
      "get size(): number", "handleClick = async (e: Event)"]),
    ("csharp", "using System;\n\nnamespace Pumps.Stations\n{\n    /// <summary>A station.</summary>\n"
               "    public class Station : IStation\n    {\n        private readonly int _id;\n\n"
               "        public Station(int id)\n        {\n            _id = id;\n        }\n\n"
               "        public async Task<bool> RestartAsync(Pump pump, CancellationToken token)\n        {\n"
               "            if (pump.IsRunning)\n            {\n                return await pump.StopAsync(token);\n"
               "            }\n            return false;\n        }\n    }\n}\n",  # session 59: methods two levels in
     ["namespace Pumps.Stations", "public class Station : IStation", "public Station(int id)",
      "public async Task<bool> RestartAsync(Pump pump, CancellationToken token)"]),
    ("swift", "package pumps.stations\n\nimport kotlinx.coroutines.delay\n\n"  # Kotlin (session 60)
              "data class Pump(val id: Int, val station: String)\n\nclass Station(private val pumps: List<Pump>) {\n"
              "    companion object {\n        fun <T> of(vararg items: T): List<T> = items.toList()\n    }\n\n"
              "    constructor(pump: Pump) : this(listOf(pump))\n\n    inner class Schedule {\n"
              "        suspend fun restart(\n            pump: Pump,\n            graceSeconds: Int = 30,\n"
              "        ): Boolean {\n            delay(graceSeconds * 1000L)\n            return true\n        }\n"
              "    }\n\n    val busy: List<Pump>\n        get() = pumps.filter { it.station == \"north\" }\n}\n\n"
              "fun <T> List<T>.second(): T = this[1]\n",
     ["data class Pump(val id: Int, val station: String)", "class Station(private val pumps: List<Pump>)",
      "companion object", "fun <T> of(vararg items: T): List<T> = items.toList()",
      "constructor(pump: Pump) : this(listOf(pump))", "inner class Schedule",
      "suspend fun restart(pump: Pump, graceSeconds: Int = 30): Boolean", "fun <T> List<T>.second(): T = this[1]"]),
    ("swift", "import SwiftUI\n\n@MainActor\nfinal class PumpStore: ObservableObject {\n"  # Swift (session 60)
              "    @Published private(set) var pumps: [Pump] = []\n\n    init(pumps: [Pump] = []) {\n"
              "        self.pumps = pumps\n    }\n\n    func restart(_ pump: Pump,\n"
              "                 after seconds: Int) async throws -> Bool {\n        true\n    }\n}\n\n"
              "extension PumpStore {\n    struct Summary {\n        let count: Int\n"
              "        func text() -> String { \"\\(count) pumps\" }\n    }\n}\n\n"
              "struct PumpList: View {\n    var body: some View {\n        Text(\"Pumps\")\n    }\n}\n",
     ["final class PumpStore: ObservableObject", "init(pumps: [Pump] = [])",
      "func restart(_ pump: Pump, after seconds: Int) async throws -> Bool", "extension PumpStore", "struct Summary",
      "func text() -> String { \"\\(count) pumps\" }", "struct PumpList: View", "var body: some View"]),
    ("swift", "package pumps\n\ncase class Pump(id: Int, station: String)\n\nobject Stations {\n"  # Scala
              "  def busy[A](pumps: Seq[Pump])(f: Pump => A): Seq[A] =\n    pumps.filter(_.station == \"north\").map(f)\n"
              "}\n",
     ["case class Pump(id: Int, station: String)", "object Stations",
      "def busy[A](pumps: Seq[Pump])(f: Pump => A): Seq[A]"]),
    ("csharp", "namespace Pumps;\n\npublic record Pump(int Id, string Station);\n\npublic class Station\n{\n"
               "    private readonly List<Pump> _pumps = new();\n\n    public int Count => _pumps.Count;\n\n"
               "    public override string ToString() => $\"Station of {Count}\";\n\n"
               "    public IEnumerable<Pump> Busy(string station,\n                                 int limit)\n    {\n"
               "        var north = _pumps.Where(p => p.Station == station);\n        return north.Take(limit);\n"
               "    }\n\n    public abstract void Reset(int id,\n                               bool hard);\n}\n",
     ["public record Pump(int Id, string Station)", "public class Station", "public int Count",
      "public override string ToString()", "public IEnumerable<Pump> Busy(string station, int limit)"]),
    ("c", "struct valve;\n\nint open_valve(struct valve *v,\n               int flags);\n\n"  # C (session 60)
          "static int\nclose_valve(struct valve *v,\n            int grace_ms)\n{\n    return 0;\n}\n",
     ["close_valve(struct valve *v, int grace_ms)"]),
    ("c", "package pumps;\n\n/**\n * Pumps, by station.\n */\npublic class Station {\n"
          "    private final int id;\n\n    public Station(int id) {\n        this.id = id;\n    }\n\n"
          "    @Override\n    public String toString() {\n        if (id > 0) {\n            return format(id);\n"
          "        }\n        return \"none\";\n    }\n}\n",
     ["public class Station", "public Station(int id)", "public String toString()"]),
    ("sql", "-- the schema\nCREATE TABLE pumps (\n  id integer PRIMARY KEY\n);\n\n"
            "CREATE OR REPLACE VIEW busy_pumps AS SELECT * FROM pumps;\n\nSELECT 1;\n",
     ["CREATE TABLE pumps (", "CREATE OR REPLACE VIEW busy_pumps AS SELECT * FROM pumps"]),
    ("yaml", "# compose\nservices:\n  web:\n    image: nginx\nvolumes:\n  data: {}\n",
     ["services", "volumes"]),
    ("docker", "FROM python:3.11 AS build\nRUN pip install .\n\nFROM python:3.11-slim\nCOPY --from=build /app /app\n",
     ["FROM python:3.11 AS build", "FROM python:3.11-slim"]),
    ("r", "# pumps\nload_pumps <- function(path) {\n  read.csv(path)\n}\n",
     ["load_pumps <- function(path)"]),
    ("python", "print 'a Python 2 file'\n\ndef main():\n    pass\n\nclass Old:\n    pass\n",  # ast cannot parse it
     ["def main()", "class Old"]),
    ("diff", "From 4af269c Mon Sep 17 00:00:00 2001\nFrom: Ana Silva <ana@example.org>\nSubject: [PATCH] Raise the "
             "retry timeout\n\n---\n retry.py | 2 +-\n\ndiff --git a/retry.py b/retry.py\nindex 1..2 100644\n"
             "--- a/retry.py\n+++ b/retry.py\n@@ -1 +1 @@\n-TIMEOUT_S = 10\n+TIMEOUT_S = 30\n",  # git format-patch
     ["Subject: [PATCH] Raise the retry timeout", "diff --git a/retry.py b/retry.py"]),
    ("xml", "<project>\n    <modelVersion>4.0.0</modelVersion>\n    <properties>\n        <java.version>17</java.version>"
            "\n    </properties>\n    <dependencies>\n        <dependency>\n        </dependency>\n    </dependencies>\n"
            "</project>\n",
     ["<project>", "<properties>", "<dependencies>"]),
])
def test_definitions_in_each_language(language: str, text: str, expected: list[str]):
    assert [h for _, h in definitions(text, language)] == expected


def test_python_definitions_start_at_their_decorators():
    text = "import click\n\n\n@click.command()\n@click.option('--n')\ndef run(n, *, verbose=False, **rest):\n    pass\n"
    [(offset, heading)] = definitions(text, "python")
    assert text[offset:].startswith("@click.command()") and heading == "def run(n, *, verbose, **rest)"
    # a form feed (^L, GNU style's page break) is white space to Python, a line break to str.splitlines
    paged = "import os\n\x0c\ndef first():\n    pass\n\x0c\nclass Second:\n    def third(self):\n        pass\n"
    assert [paged[offset:].split("\n")[0] for offset, _ in definitions(paged, "python")] == [
        "def first():", "class Second:", "    def third(self):"]


def test_files_known_by_their_name(tmp_path: Path):
    for name, kind in (("Makefile", ".mk"), ("Dockerfile", ".dockerfile"), ("Dockerfile.dev", ".dockerfile"),
                       ("Jenkinsfile", ".groovy"), ("build.gradle", ".gradle"), ("notes.txt", ".txt"),
                       ("package.json", "package.json"), ("tsconfig.app.json", "tsconfig.json"), ("pom.xml", "pom.xml"),
                       ("App.csproj", ".csproj"), ("theme.scss", ".scss"), ("defs.bzl", ".bzl")):
        assert document_suffix(tmp_path / name) == kind, name


def test_a_projects_manifest_and_style_sheets_are_read_by_their_blocks(tmp_path: Path):
    """Session 59: what a question about a project's dependencies or commands needs ("which version of X?", "what does
    npm test run?") is in its manifest: package.json (npm's own, as installed), tsconfig.json, pom.xml or a .csproj;
    and a web project's look in its style sheets (matplotlib's CSS, as installed). A manifest is read by its name (most
    .json and .xml files are data), each top-level block a heading; a style sheet each top-level rule."""
    npm = Path("/usr/lib/node_modules/npm/package.json")
    if not npm.is_file():
        pytest.skip("npm's package.json is not installed here")
    shutil.copy(npm, tmp_path / "package.json")
    document = read_document(tmp_path / "package.json")
    headings = [h for _, h in document.sections[0].headings]
    assert '"dependencies"' in headings and '"scripts"' in headings and document.title == "package.json"
    install = npm.parent / "lib" / "commands" / "install.js"  # npm's own code: a class and its methods
    if install.is_file():
        shutil.copy(install, tmp_path / "install.js")
        headings = [h for s in read_document(tmp_path / "install.js").sections for _, h in s.headings]
        assert "class Install extends ArboristWorkspaceCmd" in headings and "async exec (args)" in headings
        (tmp_path / "install.js").unlink()
    css = _installed("matplotlib", "backends/web_backend/css/boilerplate.css")
    shutil.copy(css, tmp_path / "boilerplate.css")
    headings = [h for _, h in read_document(tmp_path / "boilerplate.css").sections[0].headings]
    assert headings and all("{" not in h and not h.startswith(("/*", "*")) for h in headings), headings
    report = CorpusReport()
    (tmp_path / "data.json").write_text('{"rows": [1, 2, 3]}')  # data, not a manifest: not read as code
    assert {p.title for p in read_corpus(tmp_path, report=report, options=ReadOptions(code=True))} == {"package.json", "boilerplate.css"}


def test_a_minified_or_binary_file_is_named_with_its_reason(tmp_path: Path):
    """A minified bundle (a saved web site's, a build's) is no text to quote: listed with the reason, as GitHub's
    linguist tells them (lines of more than 110 characters on average); binary data under a source name too."""
    source = _installed("matplotlib", "backends/web_backend/js/mpl.js").read_text()
    (tmp_path / "mpl.min.js").write_text(re.sub(r"\s*\n\s*", " ", source))  # what a minifier's first pass does
    with pytest.raises(UnreadableFile, match=r"minified or generated code \(lines of [\d,]+ characters on average\)"):
        read_document(tmp_path / "mpl.min.js")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(UnreadableFile, match="binary|not UTF-8|cannot be parsed"):
        read_document(tmp_path / "blob.py")


def test_index_build_with_code_keeps_it_for_syncs_and_search_names_the_function(tmp_path: Path):
    """The commands as a user runs them: ``index build --code`` reads the project (its ``.gitignore`` named, then
    given with --exclude-from), `index info` says the index reads code, a sync without the option reads a new source file (the index keeps it), and a search for what a
    function does finds it by its heading."""
    from .test_cli import run

    folder = _project(tmp_path / "proj")
    (folder / ".gitignore").write_text("build/\n*.log\n")
    (folder / "build").mkdir()
    (folder / "build" / "generated.py").write_text("def generated():\n    return 'built, not written'\n")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(folder), "--sparse-only", "--code", "--index", "proj", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "`--gitignore` leaves them out of the index too" in built.stderr  # said, not applied unasked
    assert "py 3 file(s) at" in built.stdout
    built = run("index", "build", str(folder), "--sparse-only", "--code", "--index", "proj", "--exclude-from",
                str(folder / ".gitignore"), cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "source or configuration file(s) not read" not in built.stderr and "py 2 file(s) at" in built.stdout
    assert "leaves them out of the index too" not in built.stderr
    info = run("index", "info", "proj", cwd=tmp_path, env=env)
    assert "source and configuration files are read (--code: at every add and sync)" in info.stdout
    (folder / "src" / "valves.go").write_text("package valves\n\n// Close shuts the valve within the grace period.\n"
                                              "func Close(v *Valve, grace time.Duration) error {\n\treturn nil\n}\n")
    synced = run("index", "sync", str(folder), "--index", "proj", cwd=tmp_path, env=env)
    assert synced.returncode == 0, synced.stderr
    found = run("search", "valve grace period", "--index", "proj", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert '"func Close(v *Valve, grace time.Duration) error"' in found.stdout
    bare = run("index", "build", str(folder / "src"), "--sparse-only", "--index", "bare", cwd=tmp_path, env=env)
    assert bare.returncode == 2 and "4 source file(s): --code reads them" in bare.stderr, bare.stderr


def test_bm25_of_a_code_index_finds_an_identifier_by_its_words(tmp_path: Path):
    """BM25's words run through underscores and capitals: `grace_seconds` was one word, so a question about "the grace
    seconds" found nothing. An index that reads code (--code) indexes the words too (`SparseConfig.identifiers`); one
    built before, or with the setting off, says so in `index info` and `index rebuild` splits them."""
    from local_rag.index.manifest import IndexManifest

    from .test_cli import run

    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "valves.py").write_text('class ValveBank:\n    def close_all(self, grace_seconds):\n'
                                      '        """Shut every registered valve."""\n')
    (folder / "notes.md").write_text("# Notes\n\nThe pumps start at dawn and stop at dusk.\n")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    for name, extra in (("split", {}), ("whole", {"LOCAL_RAG_SPARSE__IDENTIFIERS": "false"})):
        built = run("index", "build", str(folder), "--sparse-only", "--code", "--index", name, cwd=tmp_path,
                    env=env | extra)
        assert built.returncode == 0, built.stderr
    assert IndexManifest.load(tmp_path / "indexes" / "split").sparse["identifiers"] is True

    def titles(index: str, question: str) -> list[str]:
        found = run("search", question, "--index", index, "--json", cwd=tmp_path, env=env)
        assert found.returncode == 0, found.stderr
        return [hit["title"] for hit in json.loads(found.stdout)["hits"]]

    assert titles("split", "grace seconds")[:1] == ["valves.py"]
    assert titles("split", "valve bank")[:1] == ["valves.py"]
    assert titles("split", "close_all")[:1] == ["valves.py"]  # named whole, found as before
    assert titles("whole", "grace seconds") == []
    info = run("index", "info", "whole", cwd=tmp_path, env=env)
    assert "BM25 of whole does not index the words of identifiers" in info.stderr
    synced = run("index", "sync", str(folder), "--index", "whole", cwd=tmp_path, env=env)
    assert synced.returncode == 0 and "`local-rag index rebuild --index whole` does" in synced.stderr, synced.stderr
    rebuilt = run("index", "rebuild", "whole", cwd=tmp_path, env=env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "BM25 now indexes the words of identifiers too" in rebuilt.stderr
    assert titles("whole", "grace seconds")[:1] == ["valves.py"]
    plain = run("index", "build", str(folder / "notes.md"), "--sparse-only", "--index", "plain", cwd=tmp_path, env=env)
    assert plain.returncode == 0, plain.stderr
    assert IndexManifest.load(tmp_path / "indexes" / "plain").sparse["identifiers"] is False  # documents: as before
    manifest = IndexManifest.load(tmp_path / "indexes" / "plain")
    del manifest.sparse["identifiers"]  # as an index built before session 59 records it
    manifest.save(tmp_path / "indexes" / "plain")
    assert titles("plain", "pumps at dawn") == ["Notes"]  # opened and searched as before, no setting asked for


def test_a_passage_of_code_is_cited_by_its_line(tmp_path: Path):
    """Session 59: a source file's passages and chunks know the line they begin on, so a search hit and an answer's
    source say "src/pieces.py:120 § def piece_bounds(...)", as an editor or a terminal opens it; an index of
    documents writes its chunk files as before (no line)."""
    from .test_cli import run

    folder = _project(tmp_path / "proj")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(folder), "--sparse-only", "--code", "--index", "proj", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    found = run("search", "packed in order into pieces of at most target characters", "--index", "proj", "--json",
                cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    hit = next(h for h in json.loads(found.stdout)["hits"] if h["doc_id"] == "src/pieces.py")
    lines = (folder / "src" / "pieces.py").read_text().splitlines()
    first = hit["text"].lstrip("\n").split("\n", 1)[0].strip()
    assert hit["line"] > 1 and first and lines[hit["line"] - 1].strip() == first  # its first line, blank lines skipped
    chunks = (tmp_path / "indexes" / "proj" / "chunks.jsonl").read_text().splitlines()
    by_doc = {json.loads(c)["doc_id"]: json.loads(c) for c in chunks}
    assert by_doc["src/code.py"]["line"] >= 1 and "line" not in by_doc["README.md"]  # documents: as before
    assert all(json.loads(c).get("line", 0) >= 1 for c in chunks if json.loads(c)["doc_id"].endswith(".py"))
