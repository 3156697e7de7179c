"""Command modules of the CLI, in the order ``derive --help`` lists them (name -> module)."""

COMMANDS: dict[str, str] = {
    "list": "list_cmd",
    "show": "show",
    "check": "check",
    "diff": "diff",
    "margin": "margin",
    "eval": "eval_cmd",
    "card": "card",
    "sweep": "sweep",
    "ledger": "ledger",
    "build": "build",
    "export": "export",
    "graph": "graph",
    "presets": "presets",
    "cache": "cache_cmd",
}
