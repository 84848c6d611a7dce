"""Upstream MCP servers for the gateway's coding-session test (test_gateway_session.py),
written with the official MCP Python SDK: the tools, argument names and result texts of the
reference `filesystem` server (@modelcontextprotocol/server-filesystem) over a real directory,
and of the reference `fetch` server (mcp-server-fetch) answering from a JSON file of pages
instead of the network (not reachable from the tests).

    python upstream_fs_fetch.py filesystem ROOT
    python upstream_fs_fetch.py fetch PAGES.json

Every fetch is appended to $FETCH_LOG (when set), so a test sees what reached the upstream.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
from pathlib import Path

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as FastMCP
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP


def filesystem(root: Path) -> FastMCP:
    mcp = FastMCP("secure-filesystem-server")

    def inside(path: str) -> Path:
        p = Path(path).resolve()
        if p != root and root not in p.parents:
            raise ValueError(f"Access denied - path outside allowed directories: {path}")
        return p

    @mcp.tool()
    def read_text_file(path: str, head: int | None = None, tail: int | None = None) -> str:
        """Read the complete contents of a file from the file system as text."""
        lines = inside(path).read_text().splitlines(keepends=True)
        if head is not None:
            lines = lines[:head]
        if tail is not None:
            lines = lines[-tail:]
        return "".join(lines)

    @mcp.tool()
    def read_multiple_files(paths: list[str]) -> str:
        """Read the contents of multiple files simultaneously."""
        return "\n---\n".join(f"{p}:\n{inside(p).read_text()}" for p in paths)

    @mcp.tool()
    def write_file(path: str, content: str) -> str:
        """Create a new file or completely overwrite an existing file with new content."""
        p = inside(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
        return f"Successfully wrote to {path}"

    @mcp.tool()
    def edit_file(path: str, edits: list[dict], dryRun: bool = False) -> str:
        """Make line-based edits to a text file. Each edit replaces exact text sequences with
        new content. Returns a git-style diff showing the changes made."""
        p = inside(path)
        before = text = p.read_text()
        for e in edits:
            if e["oldText"] not in text:
                raise ValueError(f"Could not find exact match for edit:\n{e['oldText']}")
            text = text.replace(e["oldText"], e["newText"], 1)
        if not dryRun:
            p.write_text(text)
        import difflib
        diff = "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                            text.splitlines(keepends=True), path, path))
        return f"```diff\n{diff}```\n\n"

    @mcp.tool()
    def create_directory(path: str) -> str:
        """Create a new directory or ensure a directory exists."""
        inside(path).mkdir(parents=True, exist_ok=True)
        return f"Successfully created directory {path}"

    @mcp.tool()
    def list_directory(path: str) -> str:
        """Get a detailed listing of all files and directories in a specified path."""
        return "\n".join(("[DIR] " if c.is_dir() else "[FILE] ") + c.name
                         for c in sorted(inside(path).iterdir()) if c.name != ".git")

    @mcp.tool()
    def directory_tree(path: str) -> str:
        """Get a recursive tree view of files and directories as a JSON structure."""
        def tree(p: Path):
            out = []
            for c in sorted(p.iterdir()):
                if c.name == ".git":
                    continue
                e = {"name": c.name, "type": "directory" if c.is_dir() else "file"}
                if c.is_dir():
                    e["children"] = tree(c)
                out.append(e)
            return out
        return json.dumps(tree(inside(path)), indent=2)

    @mcp.tool()
    def search_files(path: str, pattern: str, excludePatterns: list[str] | None = None) -> str:
        """Recursively search for files and directories matching a pattern."""
        base = inside(path)
        hits = [str(p) for p in sorted(base.rglob("*"))
                if ".git" not in p.parts and fnmatch.fnmatch(p.name, pattern)
                and not any(fnmatch.fnmatch(p.name, x) for x in excludePatterns or [])]
        return "\n".join(hits) if hits else "No matches found"

    @mcp.tool()
    def get_file_info(path: str) -> str:
        """Retrieve detailed metadata about a file or directory."""
        p = inside(path)
        st = p.stat()
        return (f"size: {st.st_size}\nisDirectory: {p.is_dir()}\nisFile: {p.is_file()}\n"
                f"permissions: {oct(st.st_mode)[-3:]}")

    @mcp.tool()
    def list_allowed_directories() -> str:
        """Returns the list of directories that this server is allowed to access."""
        return f"Allowed directories:\n{root}"

    return mcp


def fetch_server(pages: dict[str, str]) -> FastMCP:
    mcp = FastMCP("mcp-fetch")

    @mcp.tool()
    def fetch(url: str, max_length: int = 5000, start_index: int = 0, raw: bool = False) -> str:
        """Fetches a URL from the internet and optionally extracts its contents as markdown."""
        if os.environ.get("FETCH_LOG"):
            with open(os.environ["FETCH_LOG"], "a") as f:
                f.write(json.dumps({"url": url}) + "\n")
        if url not in pages:
            raise ValueError(f"Failed to fetch {url} - status code 404")
        text = pages[url][start_index:start_index + max_length]
        return f"Contents of {url}:\n{text}"

    return mcp


def main() -> None:
    role, arg = sys.argv[1], sys.argv[2]
    if role == "filesystem":
        server = filesystem(Path(arg).resolve())
    else:
        server = fetch_server(json.loads(Path(arg).read_text()))
    server.run()


if __name__ == "__main__":
    main()
