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
    "audit": "audit",
    "build": "build",
    "export": "export",
    "recheck": "recheck",
    "graph": "graph",
    "presets": "presets",
    "cache": "cache_cmd",
}
