"""``geon render FILE -o OUT``: the format from the extension or --format, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from geon.cli import main
from geon.cli.render import _graphviz_messages

ROOT = Path(__file__).resolve().parents[2]
LOOM = ROOT / "geon" / "examples" / "loom_sharded_add.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(
    ("case", "out", "extra", "head", "said"),
    [
        ("svg from the extension", "d.svg", [], b"<?xml", "svg"),
        ("png from the extension", "d.png", [], PNG_SIGNATURE, "png"),
        ("dot from the extension", "d.dot", [], b"digraph geon {", "dot"),
        ("upper-case extension", "d.PNG", [], PNG_SIGNATURE, "png"),
        ("--format wins over the extension", "d.txt", ["--format", "dot"], b"digraph", "dot"),
        ("--format in capitals", "d.out", ["--format", "SVG"], b"<?xml", "svg"),
    ],
)
def test_render_writes_the_format_asked_for(
    case: str,
    out: str,
    extra: list[str],
    head: bytes,
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given the loom example, when rendered to a file
    target = tmp_path / out
    code = main(["render", str(LOOM), "-o", str(target), *extra])
    # then the file holds that format and one line says so
    assert code == 0, case
    assert target.read_bytes().startswith(head), case
    assert stderr_lines(capsys) == [f'geon render: wrote {said} to "{target}"'], case


def test_render_to_stdout_defaults_to_svg(capsys: pytest.CaptureFixture[str]) -> None:
    # given no -o, when rendered, then the SVG goes to stdout
    code = main(["render", str(LOOM)])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.startswith("<?xml")
    assert captured.err.splitlines()[-1] == "geon render: wrote svg to stdout"


def test_render_highlights_the_documents_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given the loom example with an invalid dtype on one tensor
    data = json.loads(LOOM.read_text())
    data["nodes"][0]["body"]["dtype"] = "int33"
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "bad.dot"
    # when rendered
    code = main(["render", str(src), "-o", str(out)])
    # then it is drawn with the error highlighted, and says so
    assert code == 0
    assert out.read_text().count('class="issue-error"') == 1
    assert stderr_lines(capsys) == [f'geon render: wrote dot to "{out}" with 1 error highlighted']


def test_render_no_issues_draws_plain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # given the same broken document, when rendered with --no-issues, then nothing is red
    data = json.loads(LOOM.read_text())
    data["nodes"][0]["body"]["dtype"] = "int33"
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "bad.dot"
    assert main(["render", str(src), "-o", str(out), "--no-issues"]) == 0
    assert "issue-error" not in out.read_text()
    assert stderr_lines(capsys) == [f'geon render: wrote dot to "{out}"']


@pytest.mark.parametrize(
    ("case", "args", "message"),
    [
        (
            "unknown extension",
            ["-o", "{tmp}/d.pdf"],
            'cannot tell the format of "{tmp}/d.pdf" from its extension ".pdf"; expected one of '
            '(".svg", ".png", ".dot"), or name it with --format',
        ),
        (
            "no extension",
            ["-o", "{tmp}/diagram"],
            'cannot tell the format of "{tmp}/diagram" from its extension ""; expected one of '
            '(".svg", ".png", ".dot"), or name it with --format',
        ),
        (
            "unknown --format",
            ["-o", "{tmp}/d.svg", "--format", "pdf"],
            'render format "pdf" is not supported; expected one of ("svg", "png", "dot")',
        ),
        (
            "unwritable output",
            ["-o", "{tmp}/missing/d.svg"],
            'cannot write "{tmp}/missing/d.svg": No such file or directory',
        ),
    ],
)
def test_render_refuses_bad_requests_in_one_line(
    case: str,
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given a bad output request, when rendering
    code = main(["render", str(LOOM), *(a.replace("{tmp}", str(tmp_path)) for a in args)])
    # then it exits 2 with one line naming the problem, and writes nothing
    assert code == 2, case
    assert stderr_lines(capsys) == ["geon render: " + message.replace("{tmp}", str(tmp_path))]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("case", "content", "message"),
    [
        (
            "not JSON",
            "{",
            'cannot render "{src}": document is not valid JSON: Expecting property name enclosed '
            "in double quotes at line 1 column 2; expected a JSON object",
        ),
        (
            "not a document",
            "[1, 2]",
            'cannot render "{src}": document is "[1, 2]"; expected a JSON object with "id" and '
            '"nodes"',
        ),
    ],
)
def test_render_refuses_unreadable_documents_in_one_line(
    case: str, content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a file that is not a document
    src = tmp_path / "in.json"
    src.write_text(content)
    out = tmp_path / "out.svg"
    # when rendering it, then it exits 2 with one line saying why, and writes nothing
    assert main(["render", str(src), "-o", str(out)]) == 2, case
    assert stderr_lines(capsys) == ["geon render: " + message.replace("{src}", str(src))]
    assert not out.exists()


def test_render_refuses_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "nope.json"
    assert main(["render", str(src), "-o", str(tmp_path / "o.svg")]) == 2
    assert stderr_lines(capsys) == [f'geon render: cannot read "{src}": No such file or directory']


def test_render_refuses_a_document_over_the_size_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a document of 1,001 nodes (the limit is 1,000)
    nodes = [{"id": f"n{i}", "type": "urn:x#/nodes/Note", "body": {}} for i in range(1001)]
    src = tmp_path / "big.json"
    src.write_text(json.dumps({"id": "00000000-0000-4000-8000-000000000000", "nodes": nodes}))
    out = tmp_path / "big.svg"
    # when rendered, then it is refused in one line before any layout
    assert main(["render", str(src), "-o", str(out), "--no-issues"]) == 2
    assert stderr_lines(capsys) == [
        f'geon render: cannot render "{src}": the diagram has 1,001 nodes; the limit is 1,000 '
        "(render a smaller graph, or its DOT text and lay it out yourself)"
    ]
    assert not out.exists()


def test_python_m_geon_render_runs_as_a_program(tmp_path: Path) -> None:
    # given the real entry point, when it renders the loom example to PNG
    out = tmp_path / "loom.png"
    done = subprocess.run(
        [sys.executable, "-m", "geon", "render", str(LOOM), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # then it succeeds, writes a PNG and says exactly one line (Graphviz's own chatter on this
    # machine, a fontconfig warning, does not reach the user)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == PNG_SIGNATURE
    assert done.stderr.splitlines() == [f'geon render: wrote png to "{out}"']
    # and a bad request gives one line, no traceback
    bad = subprocess.run(
        [sys.executable, "-m", "geon", "render", str(LOOM), "-o", str(tmp_path / "x.gif")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [
        f'geon render: cannot tell the format of "{tmp_path / "x.gif"}" from its extension '
        '".gif"; expected one of (".svg", ".png", ".dot"), or name it with --format'
    ]


def test_graphviz_messages_are_collected_and_fontconfig_noise_dropped() -> None:
    # given text written to file descriptor 2 while rendering (as Graphviz's C code does)
    found: list[str] = []
    with _graphviz_messages(found):
        os.write(2, b'Fontconfig warning: "x.conf", line 6: unknown element "reset-dirs"\n')
        os.write(2, b"Warning: node a, port b unrecognized\n\n")
    # then the Graphviz line is kept for the user and the fontconfig warning is not
    assert found == ["Warning: node a, port b unrecognized"]
