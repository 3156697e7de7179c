"""Command modules of the CLI, in the order ``derive --help`` lists them (name -> module)."""

COMMANDS: dict[str, str] = {
    "list": "list_cmd",
    "show": "show",
    "check": "check",
    "eval": "eval_cmd",
    "presets": "presets",
}
