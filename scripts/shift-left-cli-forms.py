#!/usr/bin/env python3
"""Lists every command, argument and option of shift_left's CLI, read from its Typer code.

    pip download shift_left==0.1.52 --no-deps --python-version 3.12 --only-binary=:all: -d /tmp/sl
    unzip -q /tmp/sl/shift_left-0.1.52-py3-none-any.whl -d /tmp/sl/whl
    python3 scripts/shift-left-cli-forms.py /tmp/sl/whl/shift_left > tests/data/shift_left_0.1.52_cli.txt

One line per form: `<group> <command>` (no parameter), `<group> <command> <ARG> <type>` (a positional),
`<group> <command> --opt[ --alias…] value` or `… --opt --no-opt flag` (Typer gives a bool option
without declared names both forms). `tests/testsuite/shift_left_commands.rs` checks each one against
flinkpipe's command tree.
"""
import ast, sys, os
base = os.path.join(sys.argv[1], 'cli_commands')
for grp in ["project", "table", "pipeline"]:
    src = open(os.path.join(base, grp + ".py")).read()
    tree = ast.parse(src)
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef): continue
        if not any(isinstance(d, ast.Call) and getattr(d.func, 'attr', '') == 'command' for d in fn.decorator_list): continue
        cmd = fn.name.replace('_', '-')
        for d in fn.decorator_list:
            if isinstance(d, ast.Call) and d.args and isinstance(d.args[0], ast.Constant):
                cmd = d.args[0].value
        args = fn.args.args
        if not args: print(f"{grp} {cmd}")
        defaults = [None] * (len(args) - len(fn.args.defaults)) + fn.args.defaults
        for a, dflt in zip(args, defaults):
            ann = a.annotation
            typ = None; call = None
            if isinstance(ann, ast.Subscript) and getattr(ann.value, 'id', '') == 'Annotated':
                elts = ann.slice.elts
                typ = ast.unparse(elts[0]); call = elts[1]
            else:
                typ = ast.unparse(ann) if ann else None
                call = dflt
            kind = None
            if isinstance(call, ast.Call) and getattr(call.func, 'attr', '') in ('Option', 'Argument'):
                kind = call.func.attr
                decls = [c.value for c in call.args if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.startswith('-')]
            else:
                kind = 'Argument' if dflt is None else 'Option'
                decls = []
            name = a.arg.replace('_', '-')
            if kind == 'Argument':
                print(f"{grp} {cmd} <{a.arg.upper()}> {typ}")
            else:
                isbool = typ == 'bool'
                if decls:
                    forms = []
                    for d in decls:
                        forms += d.split('/')
                else:
                    forms = [f"--{name}"] + ([f"--no-{name}"] if isbool else [])
                print(f"{grp} {cmd} {' '.join(f.strip() for f in forms)} {'flag' if isbool else 'value'}")

# `shift_left version --config` (cli.py).
print("cli version --config flag")
