"""Map a repo-relative path to a language name, and pick how that language is chunked.

Stdlib only: discovery calls `detect_language` for every file, so it must stay cheap.
Language names double as tree-sitter-language-pack grammar names where a grammar is used.
"""
from __future__ import annotations

import posixpath

# Languages chunked by syntax tree (the names are tree-sitter-language-pack grammar names).
CODE_LANGUAGES = frozenset({
    "python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby", "php",
    "csharp", "kotlin", "swift", "bash", "lua", "scala", "elixir", "dart",
})
# Languages split by headings.
MARKUP_LANGUAGES = frozenset({"markdown", "rst"})

_EXTENSIONS: dict[str, str] = {
    # code
    "py": "python", "pyi": "python", "pyw": "python",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "javascript",
    "ts": "typescript", "mts": "typescript", "cts": "typescript", "tsx": "tsx",
    "go": "go", "rs": "rust", "java": "java",
    "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "c++": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp",
    "h++": "cpp", "ipp": "cpp", "inl": "cpp",
    "rb": "ruby", "rake": "ruby", "gemspec": "ruby", "ru": "ruby",
    "php": "php", "cs": "csharp", "kt": "kotlin", "kts": "kotlin", "swift": "swift",
    "sh": "bash", "bash": "bash", "zsh": "bash", "ksh": "bash",
    "lua": "lua", "scala": "scala", "sc": "scala", "ex": "elixir", "exs": "elixir", "dart": "dart",
    # markup
    "md": "markdown", "markdown": "markdown", "mdx": "markdown", "mdown": "markdown",
    "rst": "rst", "rest": "rst",
    # other text: line windows
    "yaml": "yaml", "yml": "yaml", "toml": "toml", "json": "json", "jsonc": "json",
    "json5": "json", "ini": "ini", "cfg": "ini", "conf": "ini", "properties": "ini",
    "txt": "text", "text": "text", "log": "text", "csv": "csv", "tsv": "csv",
    "sql": "sql", "html": "html", "htm": "html", "xml": "xml", "svg": "xml", "xsd": "xml",
    "css": "css", "scss": "css", "sass": "css", "less": "css",
    "vue": "vue", "svelte": "svelte", "graphql": "graphql", "gql": "graphql", "proto": "protobuf",
    "tf": "hcl", "hcl": "hcl", "cmake": "cmake", "mk": "make", "gradle": "groovy",
    "groovy": "groovy", "r": "r", "jl": "julia", "pl": "perl", "pm": "perl", "hs": "haskell",
    "ml": "ocaml", "zig": "zig", "el": "elisp", "clj": "clojure", "erl": "erlang",
    "ps1": "powershell", "bat": "batch", "cmd": "batch", "tex": "latex", "adoc": "asciidoc",
    "env": "text", "lock": "text", "editorconfig": "ini", "gitignore": "text",
    "dockerignore": "text", "gitattributes": "text", "mod": "text", "sum": "text",
}

_FILENAMES: dict[str, str] = {
    "dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "make",
    "gnumakefile": "make", "cmakelists.txt": "cmake", "gemfile": "ruby", "rakefile": "ruby",
    "podfile": "ruby", "vagrantfile": "ruby", "brewfile": "ruby", "justfile": "make",
    "pipfile": "toml", ".bashrc": "bash", ".zshrc": "bash", ".profile": "bash",
    ".bash_profile": "bash",
}

# Extensions that are binary or generated blobs: never index.
_SKIP_EXTENSIONS = frozenset({
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "psd", "heic",
    "mp3", "mp4", "m4a", "wav", "ogg", "flac", "avi", "mov", "mkv", "webm",
    "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "jar", "war", "whl", "egg",
    "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "key", "numbers",
    "so", "dylib", "dll", "exe", "o", "a", "lib", "obj", "bin", "class", "pyc", "pyo", "pyd",
    "wasm", "woff", "woff2", "ttf", "otf", "eot", "sqlite", "sqlite3", "db", "parquet", "arrow",
    "lance", "npy", "npz", "pkl", "pickle", "pt", "pth", "onnx", "safetensors", "h5", "ckpt",
    "iso", "dmg", "img", "deb", "rpm", "ds_store", "map",
})

_SHEBANGS = (("python", "python"), ("bash", "bash"), ("/sh", "bash"), (" sh", "bash"),
             ("zsh", "bash"), ("node", "javascript"), ("deno", "typescript"), ("ruby", "ruby"),
             ("php", "php"))


def detect_language(path: str) -> str | None:
    """Language of `path` from its name alone; None for binary-ish files; "text" if unknown."""
    name = posixpath.basename(path).lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    if name.startswith("dockerfile.") or name.endswith(".dockerfile"):
        return "dockerfile"
    stem, dot, ext = name.rpartition(".")
    if not dot:  # "LICENSE", "configure"; a shebang may still name the language
        return "text"
    if ext in _SKIP_EXTENSIONS:
        return None
    if not stem:  # dotfiles: ".gitignore", ".env"
        return _EXTENSIONS.get(ext, "text")
    if name.endswith((".min.js", ".min.css")):
        return "text"  # minified: a syntax tree buys nothing, line windows are enough
    return _EXTENSIONS.get(ext, "text")


def sniff_shebang(first_line: str) -> str | None:
    """Language named by a `#!` line, for extension-less scripts."""
    if not first_line.startswith("#!"):
        return None
    for needle, lang in _SHEBANGS:
        if needle in first_line:
            return lang
    return None
