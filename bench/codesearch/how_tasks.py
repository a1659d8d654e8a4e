"""How-questions, each with the code that answers it, written down before any system was run.

A question is answered when one of the first three results covers a gold definition: (path, name), the
unit `name` defined in `path` at the corpus head (function, method, class, struct, const arrow function;
`Owner.member` for a member name several owners define).
Several golds mean any one of them answers it.
"""
from __future__ import annotations

HOW: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {
    "httpx": [
        ("how does the client build the request that follows a redirect",
         [("httpx/_client.py", "_build_redirect_request"), ("httpx/_client.py", "_redirect_url")]),
        ("how are digest authentication challenges answered",
         [("httpx/_auth.py", "DigestAuth"), ("httpx/_auth.py", "DigestAuth._build_auth_header")]),
        ("how does httpx read proxy settings from environment variables",
         [("httpx/_utils.py", "get_environment_proxies")]),
        ("where are default timeouts configured", [("httpx/_config.py", "Timeout")]),
        ("how does the client merge base_url with a relative request URL", [("httpx/_client.py", "_merge_url")]),
        ("how is a gzip or brotli response body decoded",
         [("httpx/_decoders.py", "GZipDecoder"), ("httpx/_decoders.py", "BrotliDecoder"),
          ("httpx/_models.py", "_get_content_decoder")]),
    ],
    "rich": [
        ("how does rich measure the width of wide characters",
         [("rich/cells.py", "cell_len"), ("rich/cells.py", "get_character_cell_size")]),
        ("how are console markup tags parsed", [("rich/markup.py", "render"), ("rich/markup.py", "_parse")]),
        ("how does the progress bar estimate the remaining time",
         [("rich/progress.py", "time_remaining"), ("rich/progress.py", "speed")]),
        ("how does the console detect which colors the terminal supports",
         [("rich/console.py", "_detect_color_system")]),
        ("how does text wrapping work", [("rich/text.py", "wrap"), ("rich/_wrap.py", "divide_line")]),
        ("how are table column widths calculated", [("rich/table.py", "_calculate_column_widths")]),
    ],
    "axios": [
        ("how does axios merge request config with defaults", [("lib/core/mergeConfig.js", "mergeConfig")]),
        ("how are request interceptors run before a request is sent", [("lib/core/Axios.js", "_request"),
                                                                       ("lib/core/Axios.js", "request")]),
        ("how does axios serialize query params into the url", [("lib/helpers/buildURL.js", "buildURL")]),
        ("how does a cancel token cancel a request", [("lib/cancel/CancelToken.js", "CancelToken")]),
        ("how does axios choose which adapter sends the request", [("lib/adapters/adapters.js", "getAdapter")]),
        ("how is the response data transformed from JSON", [("lib/defaults/index.js", "transformResponse")]),
    ],
    "got": [
        ("how does got compute the delay before retrying a failed request",
         [("source/core/calculate-retry-delay.ts", "calculateRetryDelay")]),
        ("how does got parse the response body", [("source/core/response.ts", "parseBody")]),
        ("how are request timeouts implemented", [("source/core/timed-out.ts", "timedOut")]),
        ("how does pagination work", [("source/create.ts", "paginateEach"), ("source/create.ts", "paginate")]),
        ("how are beforeRequest hooks called", [("source/core/index.ts", "_makeRequest")]),
        ("how does got decide whether a redirect should be followed", [("source/core/index.ts", "_onResponseBase")]),
    ],
    "cobra": [
        ("how does cobra find the subcommand to run from the arguments", [("command.go", "Find"),
                                                                           ("command.go", "findNext")]),
        ("how does cobra suggest commands for a mistyped command name", [("command.go", "SuggestionsFor")]),
        ("how is the bash completion script generated", [("bash_completions.go", "GenBashCompletion"),
                                                         ("bash_completionsV2.go", "genBashComp")]),
        ("how are positional arguments validated", [("args.go", "ExactArgs"), ("args.go", "ValidateArgs"),
                                                     ("command.go", "ValidateArgs")]),
        ("how do persistent pre run hooks run before a command", [("command.go", "execute")]),
        ("how does cobra decide which flags are required and report missing ones",
         [("command.go", "ValidateRequiredFlags")]),
    ],
    "fd": [
        ("how are search results printed with colors", [("src/output.rs", "print_entry_colorized"),
                                                         ("src/output.rs", "print_entry")]),
        ("how does fd parse the size filter", [("src/filter/size.rs", "from_string")]),
        ("how does exec run a command for each search result", [("src/exec/job.rs", "job"),
                                                               ("src/exec/mod.rs", "execute")]),
        ("how is smart case decided from the pattern", [("src/regex_helper.rs", "pattern_has_uppercase_char")]),
        ("how does fd filter files by modification time", [("src/filter/time.rs", "TimeFilter"),
                                                           ("src/filter/time.rs", "applies_to")]),
        ("how does the walker send results from worker threads to the receiver",
         [("src/walk.rs", "spawn_senders"), ("src/walk.rs", "spawn_receiver")]),
    ],
}
